import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { authorize } from "@/lib/auth/authorize";
import type { Role } from "@/lib/auth/permissions";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { asAppError } from "@/lib/errors";
import { actorFromBearer, createToken, listAllTokens, listMyTokens, revokeAnyToken, revokeMyToken } from "./index";

/**
 * The token use cases on the console's database (real Postgres): role caps at creation, who may
 * list and revoke what, and the audit rows: they name the token (id, name) and never hold the secret.
 */
const actors: Partial<Record<Role, Actor>> = {};
const meta = (): RequestMeta => ({ requestId: `tok-${randomUUID()}`, ip: "127.0.0.1" });

beforeAll(async () => {
  const tag = randomUUID().slice(0, 8);
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({ email: `${role}-${tag}@tokens.test`, role, password: `${role}-tokens-password` });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});

/** The audit rows written under one request id, oldest first (every column, as stored). */
async function rowsOf(requestId: string) {
  const rows = await getDb().auditEvent.findMany({ where: { requestId }, orderBy: { id: "asc" } });
  return rows.map((r) => ({ ...r, id: String(r.id), details: r.details as Record<string, unknown> | null }));
}

async function failure(p: Promise<unknown>) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(asAppError(e), String(e)).not.toBeNull();
  return asAppError(e)!;
}

describe("creating a token", () => {
  it("gives the raw token once, stores it hashed, and audits token.create with its id and name but never the secret", async () => {
    const m = meta();
    const name = `<img src=x onerror=alert(1)> deploy "bot" ${randomUUID().slice(0, 4)}`;
    const { token, view } = await createToken(actors.operator!, m, {
      name: `  ${name} `,
      role: "operator",
      expiresInDays: 30,
    });
    expect(token).toMatch(/^dlqc_[0-9A-Za-z]{49}$/);
    expect(view).toMatchObject({
      name,
      role: "operator",
      state: "active",
      prefix: token.slice(0, 13),
      lastUsedAt: null,
    });
    expect(new Date(view.expiresAt).getTime() - new Date(view.createdAt).getTime()).toBe(30 * 86_400_000);
    expect(JSON.stringify(view)).not.toContain(token.slice(13));

    const rows = await rowsOf(m.requestId);
    expect(rows.map((r) => [r.action, r.outcome])).toEqual([["token.create", "success"]]);
    expect(rows[0].details).toMatchObject({ tokenId: view.id, name, role: "operator" });
    expect(rows[0].actorId).toBe(actors.operator!.id);
    expect(JSON.stringify(rows[0])).not.toContain(token.slice(13));

    const mine = await listMyTokens(actors.operator!, meta());
    expect(mine.find((t) => t.id === view.id)).toEqual(view);
    expect(Object.keys(mine[0])).not.toContain("hash");
  });

  it("refuses a role above the user's own (a viewer cannot mint an operator token), on record as a failure", async () => {
    const m = meta();
    const e = await failure(createToken(actors.viewer!, m, { name: "escalate", role: "operator", expiresInDays: 7 }));
    expect(e.code).toBe("bad_request:token-role");
    expect(e.userMessage).toContain("viewer");
    expect((await rowsOf(m.requestId)).map((r) => [r.action, r.outcome, r.details?.error])).toEqual([
      ["token.create", "failure", "bad_request:token-role"],
    ]);
    expect((await listMyTokens(actors.viewer!, meta())).some((t) => t.name === "escalate")).toBe(false);
  });

  it("lets a viewer mint a viewer token, and refuses expiries over a year, empty names and unknown roles", async () => {
    const { view } = await createToken(actors.viewer!, meta(), {
      name: "viewer's own",
      role: "viewer",
      expiresInDays: 365,
    });
    expect(view.role).toBe("viewer");
    for (const bad of [
      { name: "x", role: "viewer", expiresInDays: 366 },
      { name: "x", role: "viewer", expiresInDays: 0 },
      { name: "   ", role: "viewer", expiresInDays: 7 },
      { name: "evil\u202Etxt.exe", role: "viewer", expiresInDays: 7 },
      { name: "two\nlines", role: "viewer", expiresInDays: 7 },
      { name: "x", role: "root", expiresInDays: 7 },
      null,
    ]) {
      expect((await failure(createToken(actors.viewer!, meta(), bad as never))).code, JSON.stringify(bad)).toBe(
        "bad_request:token",
      );
    }
  });
});

describe("using a token", () => {
  it("makes audit rows of the token's requests name it, on success and on refusal", async () => {
    const { token, view } = await createToken(actors.operator!, meta(), {
      name: "script",
      role: "viewer",
      expiresInDays: 7,
    });
    const { actor } = await actorFromBearer(`Bearer ${token}`);
    expect(actor).toMatchObject({ id: actors.operator!.id, role: "viewer", tokenId: view.id });

    // A refusal: a viewer token of an operator cannot do what operators can.
    const denied = meta();
    expect((await failure(authorize(actor, "redrive:sample", { action: "redrive.plan", meta: denied }))).code).toBe(
      "forbidden:redrive:sample",
    );
    const [d] = await rowsOf(denied.requestId);
    expect(d).toMatchObject({
      action: "redrive.plan",
      outcome: "denied",
      actorRole: "viewer",
      actorId: actors.operator!.id,
    });
    expect(d.details).toMatchObject({ tokenId: view.id, permission: "redrive:sample" });

    // A success: the token revokes itself.
    const done = meta();
    await revokeMyToken(actor, done, { id: view.id });
    const [r] = await rowsOf(done.requestId);
    expect(r).toMatchObject({ action: "token.revoke", outcome: "success", target: view.id });
    expect(r.details).toMatchObject({ tokenId: view.id, name: "script" });
    for (const row of [d, r]) expect(JSON.stringify(row)).not.toContain(token.slice(13));
    expect((await failure(actorFromBearer(`Bearer ${token}`))).code).toBe("unauthorized:token");
  });

  it("will not mint a token with a token", async () => {
    const { token } = await createToken(actors.admin!, meta(), {
      name: "admin script",
      role: "admin",
      expiresInDays: 7,
    });
    const { actor } = await actorFromBearer(`Bearer ${token}`);
    expect(
      (await failure(createToken(actor, meta(), { name: "child", role: "viewer", expiresInDays: 365 }))).code,
    ).toBe("forbidden:token-from-token");
  });
});

describe("listing and revoking", () => {
  it("keeps each user to their own tokens: another's is 'not found' and stays live", async () => {
    const { view } = await createToken(actors.admin!, meta(), { name: "admin's", role: "viewer", expiresInDays: 7 });
    expect((await listMyTokens(actors.operator!, meta())).some((t) => t.id === view.id)).toBe(false);
    const m = meta();
    expect((await failure(revokeMyToken(actors.operator!, m, { id: view.id }))).code).toBe("not_found:token");
    expect((await rowsOf(m.requestId)).map((r) => [r.action, r.outcome])).toEqual([["token.revoke", "failure"]]);
    expect((await listMyTokens(actors.admin!, meta())).find((t) => t.id === view.id)?.state).toBe("active");
    expect((await failure(revokeMyToken(actors.operator!, meta(), { id: "not-a-uuid" }))).code).toBe("not_found:token");
  });

  it("lets an admin list everyone's tokens with their owners and revoke any, audited with the owner", async () => {
    const { view } = await createToken(actors.operator!, meta(), {
      name: "operator's pipeline",
      role: "operator",
      expiresInDays: 90,
    });
    const all = await listAllTokens(actors.admin!, meta());
    expect(all.find((t) => t.id === view.id)).toMatchObject({
      userEmail: actors.operator!.email,
      state: "active",
      revokedByEmail: null,
    });
    const m = meta();
    const revoked = await revokeAnyToken(actors.admin!, m, { id: view.id });
    expect(revoked.state).toBe("revoked");
    const [row] = await rowsOf(m.requestId);
    expect(row.details).toMatchObject({ tokenId: view.id, name: "operator's pipeline", ownerId: actors.operator!.id });
    expect((await listAllTokens(actors.admin!, meta())).find((t) => t.id === view.id)).toMatchObject({
      state: "revoked",
      revokedByEmail: actors.admin!.email,
    });
    const db = getDb();
    expect((await db.apiToken.findUniqueOrThrow({ where: { id: view.id } })).revokedBy).toBe(actors.admin!.id);
  });

  it("refuses listing and revoking others' tokens to viewers and operators, and records the refusals", async () => {
    const { view } = await createToken(actors.admin!, meta(), { name: "target", role: "viewer", expiresInDays: 7 });
    for (const role of ["viewer", "operator"] as const) {
      const m1 = meta();
      expect((await failure(listAllTokens(actors[role]!, m1))).code).toBe("forbidden:tokens:manage");
      expect((await rowsOf(m1.requestId)).map((r) => [r.action, r.outcome])).toEqual([["token.list_all", "denied"]]);
      const m2 = meta();
      expect((await failure(revokeAnyToken(actors[role]!, m2, { id: view.id }))).code).toBe("forbidden:tokens:manage");
      expect((await rowsOf(m2.requestId)).map((r) => [r.action, r.outcome, r.target])).toEqual([
        ["token.revoke", "denied", view.id],
      ]);
    }
    expect((await listMyTokens(actors.admin!, meta())).find((t) => t.id === view.id)?.state).toBe("active");
  });
});
