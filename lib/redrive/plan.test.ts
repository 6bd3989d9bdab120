import { describe, expect, it } from "vitest";
import { planSchema, sampleCount } from "./plan";
import { assertConfirmedCount, describeSelection, filterOfSelection } from "@/lib/selection/selection";

describe("plan", () => {
  it("fills the default plan and requires the fix", () => {
    const p = planSchema.parse({
      connectionId: "c",
      queue: "q",
      selection: { kind: "group", groupKey: "g" },
      fix: "Deployed orders 2.3.2",
      confirmedCount: 10,
    });
    expect(p).toMatchObject({
      sample: { count: 5 },
      watchSeconds: 120,
      redriveLimit: 3,
      breakerThreshold: 0.1,
      target: { kind: "origin" },
      parking: { kind: "mark" },
    });
    expect(
      planSchema.safeParse({
        connectionId: "c",
        queue: "q",
        selection: { kind: "group", groupKey: "g" },
        fix: " ",
        confirmedCount: 10,
      }).success,
    ).toBe(false);
    expect(
      planSchema.safeParse({
        connectionId: "c",
        queue: "q",
        selection: { kind: "group", groupKey: "g" },
        confirmedCount: 10,
      }).success,
    ).toBe(false);
  });
  it("sizes a sample by count or percent, within the set", () => {
    expect(sampleCount({ count: 5 }, 3)).toBe(3);
    expect(sampleCount({ percent: 10 }, 95)).toBe(10);
    expect(sampleCount({ percent: 0.1 }, 95)).toBe(1);
  });
  it("turns a selection into its index filter in one DLQ; the action's own fields never leak into it", () => {
    const input = {
      connectionId: "c",
      queue: "q",
      reason: "retired product",
      fix: "orders 2.3.2",
      target: { kind: "origin" },
    };
    expect(filterOfSelection(input, { kind: "group", groupKey: "g1" })).toEqual({
      filter: { connectionId: "c", queue: "q", groupKey: "g1" },
    });
    expect(filterOfSelection(input, { kind: "letters", letterIds: ["a", "b", "a"] })).toEqual({
      filter: { connectionId: "c", queue: "q" },
      letterIds: ["a", "b"],
    });
    const f = filterOfSelection(input, {
      kind: "filter",
      filter: { reason: "rejected", from: "2026-11-30T10:00:00.000Z" },
    });
    expect(f.filter).toMatchObject({
      connectionId: "c",
      queue: "q",
      reason: "rejected",
      from: new Date("2026-11-30T10:00:00.000Z"),
    });
    expect(filterOfSelection(input, { kind: "filter", filter: {} }).filter).toEqual({
      connectionId: "c",
      queue: "q",
      from: undefined,
      to: undefined,
    });
  });
  it("describes a selection in words", () => {
    expect(describeSelection({ kind: "letters", letterIds: ["a"] })).toBe("1 chosen letter");
    expect(describeSelection({ kind: "group", groupKey: "g1" })).toBe("group g1");
    expect(describeSelection({ kind: "filter", filter: {} })).toBe("every letter in the DLQ");
  });
  it("refuses a count that is no longer the one confirmed, saying what to review", () => {
    expect(() => assertConfirmedCount(3, 3, "count")).not.toThrow();
    expect(() => assertConfirmedCount(1, 2, "count")).toThrow(
      expect.objectContaining({
        code: "conflict:count",
        userMessage: "The selection now holds 1 letter, not the 2 you confirmed. Review the count and confirm again.",
        details: { count: 1 },
      }),
    );
    expect(() => assertConfirmedCount(4, 2, "preview")).toThrow(
      expect.objectContaining({
        userMessage: expect.stringContaining("4 letters, not the 2 you confirmed. Review the preview"),
      }),
    );
  });
});
