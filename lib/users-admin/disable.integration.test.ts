import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "@/lib/api-tokens";
import { actorFromBearer } from "@/lib/api-tokens/bearer";
import { queryAudit } from "@/lib/audit";
import { sessionCookieName } from "@/lib/auth/config";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createSession, resumeSession } from "@/lib/auth/sessions";
import { createUser, verifyCredentials } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { inRequestScope } from "@/test/request-scope";
import { updateUserAsAdmin } from "./index";

/**
 * Disabling a user ends their sessions and revokes their API tokens for good, on the real Postgres:
 * sessions are checked as every request checks them (getActor reading a real session cookie), tokens
 * as the API checks them (actorFromBearer), and enabling the user again brings back neither.
 */
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
process.env.NEXTAUTH_SECRET ||= "disable-test-secret-0123456789abcdef0123456789";
const ORIGIN = "http://127.0.0.1:3997";
process.env.NEXTAUTH_URL = ORIGIN;

const RUN = randomUUID().slice(0, 8);
const PASSWORD = "a-password-long-enough";
const meta = (): RequestMeta => ({ requestId: `disable-${randomUUID()}`, ip: "127.0.0.1" });

let admin: Actor;
let second: PrismaClient;

beforeAll(async () => {
  const a = await createUser({ email: `admin-${RUN}@disable.test`, role: "admin", password: PASSWORD });
  admin = { id: a.id, email: a.email, name: null, role: "admin" };
  second = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL! }) });
});

afterAll(async () => {
  await second?.$disconnect();
});

/** Signs in as the sign-in callback does: a session row, and the cookie naming it. */
async function signIn(user: { id: string; email: string }) {
  const sid = await createSession({ userId: user.id, method: "credentials", ip: "127.0.0.1" });
  const jwt = await encode({ token: { sub: user.id, sid, email: user.email }, secret: process.env.NEXTAUTH_SECRET! });
  return { sid, cookie: `${sessionCookieName()}=${jwt}` };
}

/** The actor a request with this cookie runs as (null: signed out), through the real session check. */
async function actorOf(cookie: string) {
  // Imported here: next/headers needs the AsyncLocalStorage global set above before it loads.
  const { getActor } = await import("@/lib/auth/session");
  const req = new Request(`${ORIGIN}/`, { headers: { cookie, host: new URL(ORIGIN).host } });
  return inRequestScope(req, () => getActor());
}

async function errorOf(p: Promise<unknown>) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  const app = asAppError(e);
  if (!app) throw new Error(`expected an AppError, got ${String(e)}`);
  return app;
}

async function auditOf(requestId: string) {
  const { rows } = await queryAudit({ action: "user.update" }, { limit: 200 });
  return rows.filter((r) => r.requestId === requestId);
}

describe("disabling a user", () => {
  it("ends every session and revokes every token, audited; enabling again revives neither", async () => {
    const u = await createUser({ email: `ops-${RUN}@disable.test`, role: "operator", password: PASSWORD });
    const laptop = await signIn(u);
    const phone = await signIn(u);
    const self = await actorOf(laptop.cookie);
    expect(self).toMatchObject({ id: u.id, role: "operator" });
    const ci = await createToken(self!, meta(), { name: "ci", role: "operator", expiresInDays: 30 });
    const cron = await createToken(self!, meta(), { name: "cron", role: "viewer", expiresInDays: 7 });
    expect((await actorFromBearer(`Bearer ${ci.token}`)).actor).toMatchObject({ id: u.id, role: "operator" });
    expect((await actorOf(phone.cookie))?.id).toBe(u.id);
    // Someone else's session and token are not touched.
    const other = await createUser({ email: `other-${RUN}@disable.test`, role: "viewer", password: PASSWORD });
    const otherSession = await signIn(other);
    const otherToken = await createToken((await actorOf(otherSession.cookie))!, meta(), {
      name: "other",
      role: "viewer",
      expiresInDays: 7,
    });

    const off = meta();
    expect(await updateUserAsAdmin(admin, off, { id: u.id, disabled: true })).toMatchObject({
      disabled: true,
      sessionsEnded: 2,
      tokensRevoked: 2,
    });

    const refusedAll = async () => {
      expect(await actorOf(laptop.cookie)).toBeNull();
      expect(await actorOf(phone.cookie)).toBeNull();
      for (const t of [ci.token, cron.token]) {
        expect((await errorOf(actorFromBearer(`Bearer ${t}`))).code).toBe("unauthorized:token");
      }
    };
    await refusedAll();
    const sessions = await getDb().authSession.findMany({ where: { userId: u.id } });
    expect(sessions.map((s) => [s.endReason, s.endedAt !== null])).toEqual([
      ["user_disabled", true],
      ["user_disabled", true],
    ]);
    const tokens = await getDb().apiToken.findMany({ where: { userId: u.id }, orderBy: { name: "asc" } });
    expect(tokens.map((t) => [t.name, t.revokedBy, t.revokedAt !== null])).toEqual([
      ["ci", admin.id, true],
      ["cron", admin.id, true],
    ]);
    expect((await actorOf(otherSession.cookie))?.id).toBe(other.id);
    expect((await actorFromBearer(`Bearer ${otherToken.token}`)).actor.id).toBe(other.id);

    const [offRow] = await auditOf(off.requestId);
    expect(offRow).toMatchObject({
      outcome: "success",
      actorEmail: admin.email,
      target: u.id,
      details: { email: u.email, disabled: true, sessionsEnded: 2, tokensRevoked: 2 },
    });

    // Enabled again: the old sessions and tokens stay dead; a new sign-in and new tokens work.
    const on = meta();
    expect(await updateUserAsAdmin(admin, on, { id: u.id, disabled: false })).toMatchObject({ disabled: false });
    await refusedAll();
    expect(await resumeSession(laptop.sid, u.id)).toBe(false);
    expect(await getDb().apiToken.count({ where: { userId: u.id, revokedAt: null } })).toBe(0);
    const [onRow] = await auditOf(on.requestId);
    expect(onRow).toMatchObject({ outcome: "success", details: { email: u.email, disabled: false } });
    expect(onRow.details).not.toHaveProperty("tokensRevoked");

    expect((await verifyCredentials(u.email, PASSWORD))?.id).toBe(u.id);
    const fresh = await signIn(u);
    const back = await actorOf(fresh.cookie);
    expect(back).toMatchObject({ id: u.id, role: "operator" });
    const next = await createToken(back!, meta(), { name: "ci again", role: "operator", expiresInDays: 30 });
    expect((await actorFromBearer(`Bearer ${next.token}`)).actor.id).toBe(u.id);
    await refusedAll();
  });

  it("refuses new sessions and tokens while the user is disabled", async () => {
    const u = await createUser({ email: `gone-${RUN}@disable.test`, role: "viewer", password: PASSWORD });
    const { cookie } = await signIn(u);
    const self = (await actorOf(cookie))!;
    await updateUserAsAdmin(admin, meta(), { id: u.id, disabled: true });
    expect(await verifyCredentials(u.email, PASSWORD)).toBeNull();
    expect((await errorOf(signIn(u))).code).toBe("unauthorized:user-disabled");
    // A request that passed its session check just before the disabling cannot mint a token after it.
    expect((await errorOf(createToken(self, meta(), { name: "late", role: "viewer", expiresInDays: 7 }))).code).toBe(
      "unauthorized:user-disabled",
    );
    expect(await getDb().authSession.count({ where: { userId: u.id, endedAt: null } })).toBe(0);
    expect(await getDb().apiToken.count({ where: { userId: u.id } })).toBe(0);
  });

  it("makes a sign-in racing a disabling wait for it, then refuses it, so no session slips in between", async () => {
    const u = await createUser({ email: `race-${RUN}@disable.test`, role: "viewer", password: PASSWORD });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    // A disabling in progress on another connection, as another replica would run it: the user row
    // is updated and its lock held until the transaction commits.
    const disabling = second.$transaction(
      async (tx) => {
        await tx.user.update({ where: { id: u.id }, data: { disabled: true } });
        locked();
        await held;
      },
      { timeout: 30_000 },
    );
    await isLocked;
    let settled = false;
    const racing = errorOf(signIn(u)).finally(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    release();
    await disabling;
    expect((await racing).code).toBe("unauthorized:user-disabled");
    expect(await getDb().authSession.count({ where: { userId: u.id } })).toBe(0);
  });

  it("records a refused disabling (of oneself) and changes nothing", async () => {
    const m = meta();
    expect((await errorOf(updateUserAsAdmin(admin, m, { id: admin.id, disabled: true }))).code).toBe("conflict:self");
    expect(await auditOf(m.requestId)).toEqual([
      expect.objectContaining({ outcome: "failure", details: { error: "conflict:self" } }),
    ]);
    expect((await getDb().user.findUnique({ where: { id: admin.id } }))?.disabled).toBe(false);
  });
});
