import { describe, expect, it } from "vitest";
import { sparkBars } from "./sparkline";

const at = (min: number) => new Date(Date.UTC(2025, 0, 1, 0, min)).toISOString();

describe("sparkBars", () => {
  it("is empty without buckets", () => {
    expect(sparkBars([], 100, 20)).toEqual({ bars: [], peak: 0, total: 0 });
  });
  it("draws one thin full-height bar, at the right, for a single bucket", () => {
    const r = sparkBars([{ start: at(0), count: 3 }], 96, 20, 48);
    expect(r.bars).toHaveLength(1);
    expect(r.bars[0]).toMatchObject({ x: 94, y: 1, height: 19, count: 3 });
    expect(r.bars[0].width).toBeLessThanOrEqual(2);
    expect(r.total).toBe(3);
  });
  it("places buckets by time, tallest at the peak, within the box", () => {
    const r = sparkBars(
      [
        { start: at(10), count: 1 },
        { start: at(0), count: 4 },
        { start: at(20), count: 2 },
      ],
      96,
      20,
      48,
    );
    expect(r.peak).toBe(4);
    expect(r.bars.map((b) => b.count)).toEqual([4, 1, 2]);
    for (const b of r.bars) {
      expect(b.x + b.width).toBeLessThanOrEqual(96);
      expect(b.y).toBeGreaterThanOrEqual(0);
    }
    expect(Math.abs(r.bars[1].x - r.bars[2].x / 2)).toBeLessThanOrEqual(2);
  });
  it("merges buckets when there are more than maxBars", () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ start: at(i), count: 1 }));
    const r = sparkBars(many, 100, 20, 20);
    expect(r.bars.length).toBeLessThanOrEqual(20);
    expect(r.bars.reduce((n, b) => n + b.count, 0)).toBe(200);
  });
});
