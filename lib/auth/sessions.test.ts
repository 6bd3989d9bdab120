import { describe, expect, it } from "vitest";
import { checkSession } from "./sessions";
import { sessionPolicy } from "./config";

const policy = sessionPolicy({ DLQ_SESSION_MAX_AGE_SECONDS: "43200", DLQ_SESSION_IDLE_SECONDS: "1800" });
const T0 = Date.parse("2026-11-30T08:00:00Z");
const min = (m: number) => new Date(T0 + m * 60_000);
const live = (lastSeenMin: number) => ({
  endedAt: null,
  endReason: null,
  lastSeenAt: min(lastSeenMin),
  expiresAt: min(12 * 60),
});

describe("session policy", () => {
  it("defaults to 12 h absolute, 30 min idle, last-seen written at most once a minute", () => {
    expect(sessionPolicy({})).toEqual({ maxAgeMs: 12 * 3600_000, idleMs: 30 * 60_000, touchMs: 60_000 });
    expect(sessionPolicy({ DLQ_SESSION_IDLE_SECONDS: "60" }).touchMs).toBe(6000);
    expect(sessionPolicy({ DLQ_SESSION_IDLE_SECONDS: "0", DLQ_SESSION_MAX_AGE_SECONDS: "nope" })).toEqual(
      sessionPolicy({}),
    );
  });
});

describe("checkSession (fake clock)", () => {
  it("keeps an active session and refreshes last-seen only once the touch interval has passed", () => {
    expect(checkSession(live(0), min(0.5), policy)).toEqual({ ok: true, touch: false });
    expect(checkSession(live(0), min(1), policy)).toEqual({ ok: true, touch: true });
    expect(checkSession(live(0), min(29.9), policy)).toEqual({ ok: true, touch: true });
  });

  it("refuses a session idle for the idle timeout, however recent its sign-in", () => {
    expect(checkSession(live(0), min(30), policy)).toEqual({ ok: false, reason: "idle" });
    // Activity every 20 minutes keeps it going: each request moves last-seen forward.
    let row = live(0);
    for (const m of [20, 40, 60, 80]) {
      const c = checkSession(row, min(m), policy);
      expect(c, `minute ${m}`).toEqual({ ok: true, touch: true });
      row = { ...row, lastSeenAt: min(m) };
    }
    expect(checkSession(row, min(110), policy)).toEqual({ ok: false, reason: "idle" });
  });

  it("refuses at the absolute expiry even when active", () => {
    expect(checkSession(live(12 * 60 - 1), min(12 * 60 - 0.01), policy)).toMatchObject({ ok: true });
    expect(checkSession(live(12 * 60 - 1), min(12 * 60), policy)).toEqual({ ok: false, reason: "expired" });
  });

  it("refuses a signed-out or unknown session", () => {
    expect(checkSession({ ...live(0), endedAt: min(1), endReason: "sign_out" }, min(2), policy)).toEqual({
      ok: false,
      reason: "sign_out",
    });
    expect(checkSession(null, min(0), policy)).toEqual({ ok: false, reason: "unknown" });
  });
});
