import { describe, expect, it } from "vitest";
import { describeProgress, formatDuration, isActiveScan, progressFraction } from "./scan-progress";

describe("scan progress", () => {
  it("knows which states are still running", () => {
    expect(["queued", "running", "paused", "cancelling"].every(isActiveScan)).toBe(true);
    expect(["succeeded", "failed", "cancelled", null].some(isActiveScan)).toBe(false);
  });
  it("computes a bounded fraction, or null without a total", () => {
    expect(progressFraction({ read: 50, total: 200 })).toBe(0.25);
    expect(progressFraction({ read: 300, total: 200 })).toBe(1);
    expect(progressFraction({ read: 5, total: null })).toBeNull();
    expect(progressFraction({ read: 5, total: 0 })).toBeNull();
  });
  it("formats durations", () => {
    expect(formatDuration(45)).toBe("45 s");
    expect(formatDuration(200)).toBe("3 min 20 s");
    expect(formatDuration(3900)).toBe("1 h 5 min");
    expect(formatDuration(null)).toBe("—");
  });
  it("describes letters read, rate and ETA", () => {
    expect(describeProgress({ read: 1200, total: 5000, rate: 340.4, eta: 11 })).toBe(
      "1,200 / 5,000 letters read · 340/s · about 11 s left",
    );
    expect(describeProgress({ read: 3, rate: 2.5 })).toBe("3 letters read · 2.5/s");
    expect(describeProgress({})).toBe("0 letters read");
  });
});
