import { describe, expect, it } from "vitest";
import { byAttention, type DlqOverviewRow } from "./queries";

const NOW = Date.parse("2026-12-02T10:00:00Z");
const row = (queue: string, over: Partial<DlqOverviewRow> = {}): DlqOverviewRow => ({
  connectionId: "c",
  queue,
  queueType: "classic",
  sampledAt: "2026-12-02T10:00:00.000Z",
  depth: 0,
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
});

describe("byAttention", () => {
  it("puts letters about to be lost first, the nearest deadline before a later one", () => {
    const rows = [
      row("deep", { depth: 50_000 }),
      row("later", { depth: 1, deadlineAt: "2026-12-02T20:00:00.000Z" }),
      row("filling", { depth: 10, inflowPerMin: 5 }),
      row("soon", { depth: 1, deadlineAt: "2026-12-02T11:00:00.000Z" }),
      row("calm"),
      row("finding", { worstFinding: "critical", openFindings: 1 }),
    ];
    expect(byAttention(rows, 24, NOW).map((r) => r.queue)).toEqual([
      "soon",
      "later",
      "finding",
      "filling",
      "deep",
      "calm",
    ]);
  });
  it("does not count a deadline beyond the warning window as urgent", () => {
    const rows = [
      row("far", { depth: 1, deadlineAt: "2026-12-09T10:00:00.000Z" }),
      row("filling", { depth: 1, inflowPerMin: 1 }),
    ];
    expect(byAttention(rows, 24, NOW).map((r) => r.queue)).toEqual(["filling", "far"]);
  });
  it("puts a firing alert before a mere finding, and a DLQ gone from the broker last", () => {
    const rows = [
      row("gone", { depth: 9, inflowPerMin: 3, missingSince: "2026-12-02T09:00:00.000Z" }),
      row("warned", { worstFinding: "warning" }),
      row("alerting", { firingAlerts: 1 }),
    ];
    expect(byAttention(rows, 24, NOW).map((r) => r.queue)).toEqual(["alerting", "warned", "gone"]);
  });
});
