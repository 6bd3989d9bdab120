import { describe, expect, it } from "vitest";
import { bucketize, detectBurst } from "./burst";

const MIN = 60_000;
const T0 = Date.UTC(2025, 0, 31, 0, 0);
/** One bucket per minute over `minutes`, counts from `f`. */
const series = (minutes: number, f: (i: number) => number) =>
  Array.from({ length: minutes }, (_, i) => ({ start: T0 + i * MIN, count: f(i) }));

describe("detectBurst", () => {
  it("flags most letters arriving within a short window (a dependency outage)", () => {
    const r = detectBurst(series(240, (i) => (i >= 100 && i < 110 ? 30 : i % 40 === 0 ? 1 : 0)));
    expect(r.burst).toBe(true);
    expect(r.from).toBe(T0 + 100 * MIN);
    expect(r.to).toBe(T0 + 110 * MIN);
    expect(r.share).toBeGreaterThan(0.9);
  });

  it("does not flag a steady trickle", () => {
    const r = detectBurst(series(240, (i) => 2 + (i % 3)));
    expect(r).toMatchObject({ burst: false, from: null, to: null });
    expect(r.share).toBeLessThan(0.2);
  });

  it("does not flag too few letters", () => {
    expect(detectBurst(series(240, (i) => (i === 50 ? 5 : 0))).burst).toBe(false);
    expect(
      detectBurst(
        series(240, (i) => (i === 50 ? 5 : 0)),
        { minLetters: 5, range: { from: T0, to: T0 + 240 * MIN } },
      ).burst,
    ).toBe(true);
  });

  it("flags a spike far above the median even when the background holds most letters", () => {
    const r = detectBurst(series(1440, (i) => (i === 700 ? 150 : 1)));
    expect(r.burst).toBe(true);
    expect([r.from, r.to]).toEqual([T0 + 700 * MIN, T0 + 701 * MIN]);
    expect(r.share).toBeCloseTo(150 / (1439 + 150));
  });

  it("does not flag two equal outages as one burst", () => {
    expect(detectBurst(series(240, (i) => (i === 20 || i === 200 ? 50 : 0))).burst).toBe(false);
  });

  it("needs a range to judge letters that all arrived in one bucket", () => {
    const one = [{ start: T0, count: 500 }];
    expect(detectBurst(one)).toMatchObject({ burst: false, share: 1 });
    expect(detectBurst(one, { bucketMs: MIN, range: { from: T0 - 23 * 60 * MIN, to: T0 + MIN } })).toMatchObject({
      burst: true,
      from: T0,
      to: T0 + MIN,
    });
  });

  it("does not flag when the window is not much shorter than the span", () => {
    // Three buckets: a tenth of the span is less than a bucket, so the window is a third of it.
    expect(
      detectBurst(
        [
          { start: T0, count: 50 },
          { start: T0 + MIN, count: 1 },
          { start: T0 + 2 * MIN, count: 1 },
        ],
        { spikeFactor: 1000 },
      ).burst,
    ).toBe(false);
  });

  it("handles empty, zero and unsorted input", () => {
    expect(detectBurst([])).toEqual({ burst: false, from: null, to: null, share: 0 });
    expect(detectBurst([{ start: T0, count: 0 }])).toEqual({ burst: false, from: null, to: null, share: 0 });
    const shuffled = series(100, (i) => (i >= 40 && i < 45 ? 20 : 0) + (i % 10 === 0 ? 1 : 0)).reverse();
    expect(detectBurst(shuffled)).toMatchObject({ burst: true, from: T0 + 40 * MIN, to: T0 + 45 * MIN });
  });

  it("honours share, window and spike options", () => {
    const data = series(100, (i) => (i < 10 ? 5 : i % 2));
    expect(detectBurst(data).burst).toBe(false); // 50 of 95 in the first tenth
    expect(detectBurst(data, { share: 0.5 }).burst).toBe(true);
    expect(detectBurst(data, { share: 0.5, windowMs: 5 * MIN }).burst).toBe(false);
  });

  // Property-style: uniform random arrivals are never a burst; the same plus a packed cluster always is.
  it("separates random background from background plus an outage", () => {
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 50; run++) {
      const day = 24 * 60 * MIN;
      const background = Array.from({ length: 200 }, () => T0 + rnd() * day);
      const at = T0 + rnd() * (day - 10 * MIN);
      const outage = Array.from({ length: 400 }, () => at + rnd() * 10 * MIN);
      const range = { from: T0, to: T0 + day };
      expect(detectBurst(bucketize(background, 5 * MIN), { range }).burst).toBe(false);
      const r = detectBurst(bucketize([...background, ...outage], 5 * MIN), { range });
      expect(r.burst).toBe(true);
      // Within a bucket of the outage: a thinly filled edge bucket may be trimmed.
      expect(r.from!).toBeLessThanOrEqual(at + 5 * MIN);
      expect(r.to!).toBeGreaterThanOrEqual(at + 5 * MIN);
      expect(r.to! - r.from!).toBeLessThanOrEqual(20 * MIN);
    }
  });
});

describe("bucketize", () => {
  it("counts arrivals per aligned bucket, sorted, skipping bad times", () => {
    expect(bucketize([T0 + 61_000, T0 + 5_000, T0 + 1_000, Number.NaN], MIN)).toEqual([
      { start: T0, count: 2 },
      { start: T0 + MIN, count: 1 },
    ]);
  });
});
