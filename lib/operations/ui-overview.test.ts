import { describe, expect, it } from "vitest";
import type { DlqOverviewRow } from "./queries";
import { mergeOverview, overviewQuery, parseSort, sortOverview } from "./ui-overview";

const now = Date.parse("2025-03-01T12:00:00Z");

function ops(queue: string, over: Partial<DlqOverviewRow> = {}): DlqOverviewRow {
  return {
    connectionId: "c1",
    queue,
    queueType: "classic",
    sampledAt: "2025-03-01T11:59:50Z",
    depth: 1,
    inFlight: null,
    inflowPerMin: 0,
    oldestAt: null,
    oldestSource: null,
    oldestAsOf: null,
    retentionMs: null,
    deadlineAt: null,
    error: null,
    missingSince: null,
    owner: null,
    openFindings: 0,
    worstFinding: null,
    firingAlerts: 0,
    lastAlertAt: null,
    trend: [],
    ...over,
  };
}

const live = (name: string, depth: number | null, connectionId = "c1") => ({ connectionId, name, depth });

describe("mergeOverview", () => {
  it("merges by connection and name, sampled (needs attention first) before unsampled", () => {
    const items = mergeOverview([live("a", 3), live("b", 4), live("a", 9, "c2")], [ops("b"), ops("a")]);
    expect(items.map((i) => `${i.connectionId}/${i.name}`)).toEqual(["c1/b", "c1/a", "c2/a"]);
    expect(items[0].live?.depth).toBe(4);
    expect(items[1].ops?.queue).toBe("a");
    expect(items[2].ops).toBeNull();
    expect(items.map((i) => i.attention)).toEqual([0, 1, 4]);
  });
  it("keeps DLQs only the sampler knows (broker unreachable), without live figures", () => {
    const items = mergeOverview([], [ops("x")]);
    expect(items).toHaveLength(1);
    expect(items[0].live).toBeNull();
  });
});

describe("sortOverview", () => {
  const items = mergeOverview(
    [live("soon", 5), live("later", 50), live("none", 7), live("unsampled", 100)],
    [
      ops("soon", {
        deadlineAt: "2025-03-01T13:00:00Z",
        oldestAt: "2025-03-01T08:00:00Z",
        inflowPerMin: 2,
        worstFinding: "warning",
        openFindings: 1,
        owner: { team: "Zeta", contact: "z", source: "console" },
      }),
      ops("later", {
        deadlineAt: "2025-03-03T13:00:00Z",
        oldestAt: "2025-03-01T11:00:00Z",
        inflowPerMin: 0.5,
        worstFinding: "critical",
        openFindings: 1,
        owner: { team: "alpha", contact: "a", source: "config" },
      }),
      ops("none", { inflowPerMin: null, openFindings: 0 }),
    ],
  );
  const names = (xs: typeof items) => xs.map((i) => i.name);

  it("defaults to the needs-attention order", () => {
    expect(names(sortOverview(items, "attention", "asc", undefined, now))).toEqual([
      "soon",
      "later",
      "none",
      "unsampled",
    ]);
  });
  it("sorts by the deadline, soonest first, unknown last in both directions", () => {
    expect(names(sortOverview(items, "lost", "asc", undefined, now))).toEqual(["soon", "later", "none", "unsampled"]);
    expect(names(sortOverview(items, "lost", "desc", undefined, now))).toEqual(["later", "soon", "none", "unsampled"]);
  });
  it("sorts by depth from the broker", () => {
    expect(names(sortOverview(items, "depth", "desc", undefined, now))).toEqual(["unsampled", "later", "none", "soon"]);
  });
  it("sorts by inflow and by age of the oldest letter", () => {
    expect(names(sortOverview(items, "inflow", "desc", undefined, now))).toEqual([
      "soon",
      "later",
      "none",
      "unsampled",
    ]);
    expect(names(sortOverview(items, "oldest", "desc", undefined, now))).toEqual([
      "soon",
      "later",
      "none",
      "unsampled",
    ]);
  });
  it("sorts findings by worst severity, owners by team name ignoring case", () => {
    expect(names(sortOverview(items, "findings", "desc", undefined, now))).toEqual([
      "later",
      "soon",
      "none",
      "unsampled",
    ]);
    expect(names(sortOverview(items, "owner", "asc", undefined, now))).toEqual(["later", "soon", "none", "unsampled"]);
  });
  it("sorts by name and by the connection's display name", () => {
    expect(names(sortOverview(items, "name", "asc", undefined, now))).toEqual(["later", "none", "soon", "unsampled"]);
    const two = mergeOverview([live("q", 1, "b-id"), live("q", 1, "a-id")], []);
    const display = (id: string) => (id === "a-id" ? "Zulu" : "Alpha");
    expect(sortOverview(two, "connection", "asc", display, now).map((i) => i.connectionId)).toEqual(["b-id", "a-id"]);
  });
});

describe("parseSort / overviewQuery", () => {
  it("falls back to needs attention first", () => {
    expect(parseSort(undefined, undefined)).toEqual({ key: "attention", dir: "asc" });
    expect(parseSort("<script>", "up")).toEqual({ key: "attention", dir: "asc" });
    expect(parseSort("lost", undefined)).toEqual({ key: "lost", dir: "asc" });
    expect(parseSort("depth", "asc")).toEqual({ key: "depth", dir: "asc" });
  });
  it("writes only what differs from the default", () => {
    expect(overviewQuery({ key: "attention", dir: "asc", q: "" })).toBe("");
    expect(overviewQuery({ key: "depth", dir: "desc", q: "" })).toBe("?sort=depth");
    expect(overviewQuery({ key: "depth", dir: "asc", q: "orders" })).toBe("?sort=depth&dir=asc&q=orders");
    expect(overviewQuery({ key: "attention", dir: "asc", q: "", gone: true })).toBe("?gone=1");
  });
});
