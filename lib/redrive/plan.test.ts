import { describe, expect, it } from "vitest";
import { planSchema, sampleCount } from "./plan";

describe("plan", () => {
  it("fills issue 6's defaults and requires the fix", () => {
    const p = planSchema.parse({ connectionId: "c", queue: "q", selection: { kind: "group", groupKey: "g" }, fix: "Deployed orders 2.3.2", confirmedCount: 10 });
    expect(p).toMatchObject({ sample: { count: 5 }, watchSeconds: 120, redriveLimit: 3, breakerThreshold: 0.1, target: { kind: "origin" }, parking: { kind: "mark" } });
    expect(planSchema.safeParse({ connectionId: "c", queue: "q", selection: { kind: "group", groupKey: "g" }, fix: " ", confirmedCount: 10 }).success).toBe(false);
    expect(planSchema.safeParse({ connectionId: "c", queue: "q", selection: { kind: "group", groupKey: "g" }, confirmedCount: 10 }).success).toBe(false);
  });
  it("sizes a sample by count or percent, within the set", () => {
    expect(sampleCount({ count: 5 }, 3)).toBe(3);
    expect(sampleCount({ percent: 10 }, 95)).toBe(10);
    expect(sampleCount({ percent: 0.1 }, 95)).toBe(1);
  });
});
