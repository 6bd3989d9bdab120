import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db";
import { beginSignInAttempt, finishSignInAttempt } from "./rate-limit";
import { createSession, endSession, resumeSession } from "./sessions";
import { sessionPolicy } from "./config";

// Real Postgres (DATABASE_URL), with the clock passed in: the stored timestamps are the fake ones,
// starting at this minute (a fixed date would age past the table's 24-hour cleanup one day).
afterAll(() => closeDb());
const tag = randomBytes(4).toString("hex");
const T0 = new Date(Math.floor(Date.now() / 60_000) * 60_000);
const at = (min: number) => new Date(T0.getTime() + min * 60_000);
const limits = { windowMs: 15 * 60_000, perEmail: 5, perIp: 20 };

describe("sign-in attempts in Postgres", () => {
  it("refuses the sixth attempt for an email, forgets failures before a success, frees up as they age", async () => {
    const email = `limit-${tag}@it.test`;
    const ip = `it-${tag}`;
    for (let i = 0; i < 5; i++) {
      const a = await beginSignInAttempt({ email, ip }, at(i), limits);
      expect(a.decision.limited).toBe(false);
      await finishSignInAttempt(a.id, "failure");
    }
    expect((await beginSignInAttempt({ email, ip }, at(5), limits)).decision).toEqual({
      limited: true,
      scope: "email",
      retryAfterMs: 10 * 60_000,
    });
    // The refused attempt does not count: at minute 15 the first failure has aged out.
    const later = await beginSignInAttempt({ email, ip }, at(15), limits);
    expect(later.decision.limited).toBe(false);
    await finishSignInAttempt(later.id, "success");
    // After a success the email starts over, but the address keeps its failures.
    const rows = await getDb().signInAttempt.findMany({
      where: { email },
      orderBy: { id: "asc" },
      select: { outcome: true },
    });
    expect(rows.map((r) => r.outcome)).toEqual([
      "failure",
      "failure",
      "failure",
      "failure",
      "failure",
      "limited",
      "success",
    ]);
    expect((await beginSignInAttempt({ email, ip }, at(16), limits)).decision.limited).toBe(false);
  });

  it("counts attempts still in flight, so parallel guesses cannot slip past the limit", async () => {
    const email = `burst-${tag}@it.test`;
    const results = await Promise.all(
      Array.from({ length: 12 }, () => beginSignInAttempt({ email, ip: null }, at(0), limits)),
    );
    expect(results.filter((r) => !r.decision.limited).length).toBeLessThanOrEqual(5);
  });
});

describe("sessions in Postgres", () => {
  const policy = sessionPolicy({ DLQ_SESSION_IDLE_SECONDS: "1800", DLQ_SESSION_MAX_AGE_SECONDS: "43200" });
  const userId = randomUUID();

  it("stays live while used, ends when idle, and cannot be revived", async () => {
    const sid = await createSession({ userId, method: "credentials" }, at(0), policy);
    for (const m of [10, 35, 60]) expect(await resumeSession(sid, userId, at(m), policy), `minute ${m}`).toBe(true);
    expect(await resumeSession(sid, randomUUID(), at(61), policy)).toBe(false); // another user's cookie cannot name it
    expect(await resumeSession(sid, userId, at(91), policy)).toBe(false);
    expect(await getDb().authSession.findUnique({ where: { id: sid }, select: { endReason: true } })).toEqual({
      endReason: "idle",
    });
    expect(await resumeSession(sid, userId, at(92), policy)).toBe(false);
  });

  it("ends at the absolute expiry however active, and at sign-out", async () => {
    const sid = await createSession({ userId, method: "oidc" }, at(0), policy);
    for (let m = 20; m < 12 * 60; m += 20) expect(await resumeSession(sid, userId, at(m), policy)).toBe(true);
    expect(await resumeSession(sid, userId, at(12 * 60), policy)).toBe(false);
    const other = await createSession({ userId, method: "credentials" }, at(0), policy);
    await endSession(other, "sign_out", at(1));
    expect(await resumeSession(other, userId, at(2), policy)).toBe(false);
    expect(await resumeSession("not-a-uuid", userId, at(2), policy)).toBe(false);
  });
});
