import { describe, expect, it } from "vitest";
import { evaluateSignInLimit, limitMessage, retryMinutes } from "./rate-limit";

const policy = { windowMs: 15 * 60_000, perEmail: 5, perIp: 20 };
const T0 = Date.parse("2026-11-30T12:00:00Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const times = (n: number, fromMinute = 0, step = 1) => Array.from({ length: n }, (_, i) => at(fromMinute + i * step));

describe("evaluateSignInLimit (fake clock)", () => {
  it("allows up to N-1 failures per email and refuses at N", () => {
    expect(evaluateSignInLimit({ emailFailures: times(4), ipFailures: times(4), now: at(5) }, policy)).toEqual({
      limited: false,
    });
    const d = evaluateSignInLimit({ emailFailures: times(5), ipFailures: times(5), now: at(5) }, policy);
    expect(d).toEqual({ limited: true, scope: "email", retryAfterMs: 10 * 60_000 });
  });

  it("frees the email once enough failures age out of the window", () => {
    const failures = times(5); // minutes 0..4
    // At minute 14:59 the first failure is still inside the 15-minute window.
    expect(
      evaluateSignInLimit({ emailFailures: failures, ipFailures: [], now: new Date(T0 + 15 * 60_000 - 1000) }, policy)
        .limited,
    ).toBe(true);
    // The caller passes only failures inside the window: at minute 15 the first has left it.
    expect(evaluateSignInLimit({ emailFailures: failures.slice(1), ipFailures: [], now: at(15) }, policy)).toEqual({
      limited: false,
    });
  });

  it("waits for the right failure when more than N are in the window", () => {
    // 7 failures at minutes 0..6: free again when only 4 remain, i.e. when the failure at minute 2 leaves.
    const d = evaluateSignInLimit({ emailFailures: times(7).reverse(), ipFailures: [], now: at(7) }, policy);
    expect(d).toEqual({ limited: true, scope: "email", retryAfterMs: (2 + 15 - 7) * 60_000 });
  });

  it("limits an address trying many emails, with its own larger budget", () => {
    expect(evaluateSignInLimit({ emailFailures: [at(1)], ipFailures: times(19, 0, 0.5), now: at(10) }, policy)).toEqual(
      { limited: false },
    );
    const d = evaluateSignInLimit({ emailFailures: [at(1)], ipFailures: times(20, 0, 0.5), now: at(10) }, policy);
    expect(d).toEqual({ limited: true, scope: "ip", retryAfterMs: 5 * 60_000 });
  });

  it("reports the longer wait when both are limited, and never less than a second", () => {
    const d = evaluateSignInLimit({ emailFailures: times(5, 3), ipFailures: times(20, 0, 0), now: at(8) }, policy);
    expect(d).toEqual({ limited: true, scope: "email", retryAfterMs: 10 * 60_000 });
    expect(evaluateSignInLimit({ emailFailures: times(5, 0, 0), ipFailures: [], now: at(15) }, policy)).toMatchObject({
      retryAfterMs: 1000,
    });
  });

  it("says how long to wait in whole minutes, rounded up", () => {
    expect(retryMinutes(1000)).toBe(1);
    expect(retryMinutes(10 * 60_000)).toBe(10);
    expect(retryMinutes(10 * 60_000 + 1)).toBe(11);
    expect(limitMessage(60_000)).toBe("Too many attempts; try again in 1 minute.");
    expect(limitMessage(9 * 60_000)).toBe("Too many attempts; try again in 9 minutes.");
  });
});
