import { describe, expect, it } from "vitest";
import type { DlqVitals } from "@/lib/brokers/contract/inspection";
import { figuresOf, inflowOf } from "./vitals";

const vitals = (over: Partial<DlqVitals> = {}): DlqVitals => ({
  name: "orders.dlq",
  queueType: "classic",
  depth: 10,
  inFlight: null,
  enteredTotal: null,
  oldestAt: null,
  retentionMs: null,
  retentionClock: "arrival",
  ...over,
});
const prev = (depth: number | null, entered: bigint | null = null) => ({
  depth,
  enteredTotal: entered,
  sampledAt: new Date("2026-12-02T10:00:00Z"),
});

describe("inflowOf", () => {
  it("is the counter's delta where the broker keeps one", () => {
    expect(inflowOf(vitals({ enteredTotal: 1_250, depth: 3 }), prev(900, 1_200n))).toBe(50);
  });
  it("is unknown when the counter went down (a recreated topic), not a negative inflow", () => {
    expect(inflowOf(vitals({ enteredTotal: 5 }), prev(10, 1_200n))).toBeNull();
  });
  it("is the depth's increase without a counter, never negative", () => {
    expect(inflowOf(vitals({ depth: 14 }), prev(10))).toBe(4);
    expect(inflowOf(vitals({ depth: 2 }), prev(10))).toBe(0);
  });
  it("is unknown on the first round", () => {
    expect(inflowOf(vitals({ depth: 14, enteredTotal: 14 }), null)).toBeNull();
  });
});

describe("figuresOf", () => {
  it("puts the deadline at the oldest letter's clock start plus the retention, from the broker", () => {
    const f = figuresOf(vitals({ oldestAt: "2026-12-02T08:00:00.000Z", retentionMs: 4 * 3600_000 }), null, null);
    expect(f.oldestSource).toBe("broker");
    expect(f.deadlineAt?.toISOString()).toBe("2026-12-02T12:00:00.000Z");
  });
  it("falls back to the last scan and says so, with the scan's time", () => {
    const asOf = new Date("2026-12-02T09:30:00Z");
    const f = figuresOf(vitals({ retentionMs: 86400_000 }), null, { oldestAt: new Date("2026-12-01T12:00:00Z"), asOf });
    expect(f.oldestSource).toBe("scan");
    expect(f.oldestAsOf).toEqual(asOf);
    expect(f.deadlineAt?.toISOString()).toBe("2026-12-02T12:00:00.000Z");
  });
  it("has no deadline where letters are kept until removed, and no oldest letter in an empty DLQ", () => {
    expect(figuresOf(vitals({ oldestAt: "2026-12-02T08:00:00.000Z" }), null, null).deadlineAt).toBeNull();
    const empty = figuresOf(vitals({ depth: 0, oldestAt: "2026-12-02T08:00:00.000Z", retentionMs: 1000 }), null, {
      oldestAt: new Date(),
      asOf: new Date(),
    });
    expect(empty.oldestAt).toBeNull();
    expect(empty.deadlineAt).toBeNull();
  });
});
