import { describe, expect, it } from "vitest";
import type { Clock } from "./clock";
import { TokenBucket, batchSizeFor, moveWindowFor } from "./token-bucket";

/** A clock that only moves when the code under test sleeps (or the test advances it). */
function fakeClock(start = 1_000_000): Clock & { t: number; advance(ms: number): void } {
  const c = {
    t: start,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += Math.max(0, ms);
    },
    advance: (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

describe("TokenBucket", () => {
  it("paces batches at exactly the rate over seconds", async () => {
    for (const rate of [1, 100, 1000, 37.5]) {
      const clock = fakeClock();
      const bucket = new TokenBucket(rate, clock);
      const n = batchSizeFor(rate);
      const t0 = clock.now();
      let sent = 0;
      while (clock.now() - t0 < 30_000) {
        await bucket.take(n);
        if (clock.now() - t0 >= 30_000) break;
        sent += n;
      }
      const achieved = sent / 30;
      // Never above the rate; below it by at most the batch that would have gone at the 30th second.
      expect(achieved / rate).toBeLessThanOrEqual(1 + 1e-9);
      expect(achieved / rate).toBeGreaterThanOrEqual(1 - n / (30 * rate) - 1e-9);
    }
  });

  it("never bursts: idle time earns no credit", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(10, clock);
    const t0 = clock.now();
    await bucket.take(10); // the first batch pays for itself: at +1 s
    expect(clock.now() - t0).toBe(1000);
    clock.advance(60_000); // a minute idle (paused, slow broker)
    const before = clock.now();
    await bucket.take(10); // at once
    expect(clock.now()).toBe(before);
    await bucket.take(10); // one second later, not earlier
    expect(clock.now() - before).toBe(1000);
    // In any 1 s span no more than rate + one batch started.
  });

  it("counts time the work took: a slow consumer of tokens is not throttled further", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(100, clock);
    await bucket.take(20); // goes at +200 ms
    clock.advance(500); // the batch itself took 500 ms
    const t = clock.now();
    await bucket.take(20);
    expect(clock.now()).toBe(t);
  });

  it("reset forgets the schedule", async () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(1, clock);
    await bucket.take(5);
    clock.advance(60_000);
    bucket.reset();
    const t = clock.now();
    await bucket.take(1); // a fresh start: the batch's own second, no credit from before
    expect(clock.now() - t).toBe(1000);
  });

  it("never lets more than rate × t letters go in the first t seconds, whatever the batch sizes", async () => {
    for (const rate of [1, 3, 250]) {
      const clock = fakeClock();
      const bucket = new TokenBucket(rate, clock);
      const t0 = clock.now();
      let sent = 0;
      for (const n of [1, batchSizeFor(rate), 2, batchSizeFor(rate), 1]) {
        await bucket.take(n);
        sent += n;
        expect(sent).toBeLessThanOrEqual((rate * (clock.now() - t0)) / 1000 + 1e-9);
      }
    }
  });

  it("refuses a rate that is not positive", () => {
    expect(() => new TokenBucket(0)).toThrow();
    expect(() => new TokenBucket(Number.NaN)).toThrow();
  });

  it("sizes batches to ~200 ms of letters, 1..500", () => {
    expect(batchSizeFor(0.5)).toBe(1);
    expect(batchSizeFor(100)).toBe(50);
    expect(batchSizeFor(1000)).toBe(500);
    expect(batchSizeFor(1e6)).toBe(2000);
  });
});

describe("moveWindowFor", () => {
  it("keeps the adapters' default window of 64 for slow jobs, grows with the rate, and caps the crash window at 512", () => {
    expect(moveWindowFor(1)).toBe(64);
    expect(moveWindowFor(256)).toBe(64);
    expect(moveWindowFor(300)).toBe(75);
    expect(moveWindowFor(1000)).toBe(250);
    expect(moveWindowFor(10_000)).toBe(512);
  });
});
