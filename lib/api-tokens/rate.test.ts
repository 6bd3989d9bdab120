import { describe, expect, it } from "vitest";
import { AppError, httpStatusOf } from "@/lib/errors";
import {
  decideRate,
  retryAfterMs,
  tokenRateLimitError,
  tokenRateLimitOf,
  tokenRatePolicy,
  windowCapacity,
  windowOf,
} from "./rate";

const P = { limit: 10, windowMs: 60_000 };

describe("token rate policy", () => {
  it("defaults to 300 a minute and reads DLQ_API_RATE_PER_MINUTE", () => {
    expect(tokenRatePolicy({})).toEqual({ limit: 300, windowMs: 60_000 });
    expect(tokenRatePolicy({ DLQ_API_RATE_PER_MINUTE: " 42 " })).toEqual({ limit: 42, windowMs: 60_000 });
  });
  it("refuses a value that is not a whole number in range", () => {
    for (const v of ["0", "-1", "1.5", "abc", "100001"])
      expect(() => tokenRatePolicy({ DLQ_API_RATE_PER_MINUTE: v }), v).toThrow(/DLQ_API_RATE_PER_MINUTE/);
  });
});

describe("the sliding-window decision", () => {
  it("places a time in its fixed window", () => {
    expect(windowOf(125_000, P)).toEqual({ startMs: 120_000, elapsedMs: 5_000 });
    expect(windowOf(120_000, P)).toEqual({ startMs: 120_000, elapsedMs: 0 });
  });

  it("lets `limit` requests through in a window when the previous one was empty, and refuses the next", () => {
    for (let c = 0; c < 10; c++) expect(decideRate(0, c, 30_000, P)).toEqual({ limited: false });
    expect(decideRate(0, 10, 30_000, P).limited).toBe(true);
  });

  it("counts the previous window by the share of it still inside the sliding window", () => {
    // At the start of a window the whole previous one counts; half way, half of it; at the end, none.
    expect(windowCapacity(10, 0, P)).toBe(0);
    expect(windowCapacity(10, 30_000, P)).toBe(5);
    expect(windowCapacity(10, 60_000, P)).toBe(10);
    expect(windowCapacity(4, 45_000, P)).toBe(9);
    expect(decideRate(10, 4, 30_000, P)).toEqual({ limited: false });
    expect(decideRate(10, 5, 30_000, P).limited).toBe(true);
  });

  it("says when to retry within the window, once enough of the previous one has faded", () => {
    // 10 before, 5 now, 30 s in: 10 × (30 − t)/60 + 6 ≤ 10 ⇔ t ≥ 6 s.
    expect(retryAfterMs(10, 5, 30_000, P)).toBe(6_000);
    const at = 30_000 + retryAfterMs(10, 5, 30_000, P);
    expect(decideRate(10, 5, at, P)).toEqual({ limited: false });
    expect(decideRate(10, 5, at - 1_000, P).limited).toBe(true);
  });

  it("says when to retry in the next window when this one is full", () => {
    // 0 before, 10 now, 20 s in: 40 s to the next window, where 10 × (60 − t')/60 + 1 ≤ 10 ⇔ t' ≥ 6 s.
    expect(retryAfterMs(0, 10, 20_000, P)).toBe(46_000);
    expect(decideRate(10, 0, 6_000, P)).toEqual({ limited: false });
    expect(decideRate(10, 0, 5_000, P).limited).toBe(true);
  });

  it("never says less than a second, and rounds up to whole seconds", () => {
    expect(retryAfterMs(10, 5, 35_999, P)).toBe(1_000);
    expect(retryAfterMs(10, 5, 29_500, P)).toBe(7_000);
  });

  it("a limit of 1 lets one request a minute through", () => {
    const one = { limit: 1, windowMs: 60_000 };
    expect(decideRate(0, 0, 0, one)).toEqual({ limited: false });
    expect(decideRate(0, 1, 10_000, one)).toEqual({ limited: true, retryAfterMs: 110_000 });
    expect(decideRate(1, 0, 59_000, one).limited).toBe(true);
    expect(decideRate(1, 0, 60_000, one).limited).toBe(false);
  });
});

describe("the refusal", () => {
  it("carries whole seconds for Retry-After, which tokenRateLimitOf reads back", () => {
    const e = tokenRateLimitError(6_001, P);
    expect(e.code).toBe("too_many_requests:token");
    expect(httpStatusOf(e)).toBe(429);
    expect(tokenRateLimitOf(e)).toEqual({ retryAfterSeconds: 7 });
    expect(e.userMessage).toContain("Retry in 7 s");
    expect(tokenRateLimitOf(new AppError("unauthorized:token", { userMessage: "x" }))).toBeNull();
    expect(tokenRateLimitOf(new Error("x"))).toBeNull();
  });
});
