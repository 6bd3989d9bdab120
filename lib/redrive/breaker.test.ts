import { describe, expect, it } from "vitest";
import { breakerVerdict } from "./breaker";

const cfg = { threshold: 0.1, window: 200, minLetters: 20 };

describe("breakerVerdict", () => {
  it("trips above the threshold, with the numbers in operator words", () => {
    const v = breakerVerdict({ redriven: 100, returned: 11 }, cfg);
    expect(v.trip).toBe(true);
    expect(v.share).toBeCloseTo(0.11);
    expect(v.reason).toMatch(/11 of the last 100 redriven letters \(11%\).*above the 10% limit/);
  });
  it("does not trip at or below the threshold", () => {
    expect(breakerVerdict({ redriven: 100, returned: 10 }, cfg).trip).toBe(false);
    expect(breakerVerdict({ redriven: 100, returned: 0 }, cfg)).toEqual({ trip: false, share: 0, reason: null });
  });
  it("waits for enough letters in the window", () => {
    expect(breakerVerdict({ redriven: 3, returned: 3 }, cfg).trip).toBe(false);
    expect(breakerVerdict({ redriven: 20, returned: 3 }, cfg).trip).toBe(true);
  });
  it("handles an empty window", () => {
    expect(breakerVerdict({ redriven: 0, returned: 0 }, cfg).trip).toBe(false);
  });
});
