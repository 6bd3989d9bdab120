import { describe, expect, it } from "vitest";
import type { DlqListing } from "@/lib/dlq/types";
import type { DlqOverviewRow } from "@/lib/operations/queries";
import { toDlqList } from "./dlqs";

/** The listing's shaping with the sampler's rows: which DLQ gets which figures, and who gets none. */
const fetchedAt = "2026-12-02T10:00:00.000Z";
const dlq = (name: string) => ({
  connectionId: "c1",
  name,
  kind: "rabbitmq" as const,
  queueType: "classic",
  depth: 3,
  inFlight: 0,
  consumers: 0,
  origins: [],
  source: "discovered" as const,
  readRisk: null,
  warnings: [],
  facts: [],
});
const listing = {
  fetchedAt,
  connections: [
    {
      connectionId: "c1",
      displayName: "C1",
      kind: "rabbitmq",
      status: "ok",
      error: null,
      dlqs: [dlq("a.dlq"), dlq("b.dlq")],
    },
  ],
} as unknown as DlqListing;
const row = (over: Partial<DlqOverviewRow>): DlqOverviewRow =>
  ({
    connectionId: "c1",
    queue: "a.dlq",
    queueType: "classic",
    sampledAt: "2026-12-02T09:59:00.000Z",
    depth: 3,
    inflowPerMin: 0.5,
    oldestAt: "2026-12-02T08:00:00.000Z",
    oldestSource: "broker",
    oldestAsOf: "2026-12-02T09:59:00.000Z",
    retentionMs: 6 * 3600_000,
    deadlineAt: "2026-12-02T14:00:00.000Z",
    error: null,
    missingSince: null,
    owner: { team: "payments", contact: "#pay", source: "config" },
    openFindings: 2,
    worstFinding: "warning",
    firingAlerts: 1,
    lastAlertAt: null,
    trend: [...new Array(59).fill(null), 3],
    ...over,
  }) as DlqOverviewRow;

describe("toDlqList with the sampler's figures", () => {
  it("puts each status row on its own DLQ, ages the oldest letter at fetchedAt, and leaves unsampled DLQs null", () => {
    const out = toDlqList(listing, [row({}), row({ connectionId: "other", queue: "b.dlq" })]);
    const [a, b] = out.connections[0].dlqs;
    expect(a.operations).toMatchObject({
      oldestAgeSeconds: 7200,
      deadlineAt: "2026-12-02T14:00:00.000Z",
      openFindings: 2,
      worstFinding: "warning",
      owner: { team: "payments" },
    });
    expect(a.operations?.trend.at(-1)).toBe(3);
    // Same queue name on another connection: not this DLQ's figures.
    expect(b.operations).toBeNull();
  });

  it("gives every DLQ null figures when the caller may not read operations", () => {
    const out = toDlqList(listing, null);
    expect(out.connections[0].dlqs.map((d) => d.operations)).toEqual([null, null]);
  });
});
