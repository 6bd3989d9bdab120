import { randomUUID } from "node:crypto";
import path from "node:path";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "@/lib/api-tokens";
import { sessionCookieName } from "@/lib/auth/config";
import { PERMISSIONS, type Permission } from "@/lib/auth/permissions";
import { createSession } from "@/lib/auth/sessions";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { discover, MATRIX_ROLES, rowKey, TOKEN_MATRIX, type Role, type RouteRow } from "@/test/access-matrix";

/**
 * The authorization matrix for token routes (test/access-matrix.ts TOKEN_MATRIX): each v1 row ×
 * each role, called with a real token of that role (real Postgres), plus no token and a session
 * cookie alone. A refusal is 403 problem details naming the permission, audited once with the
 * token id.
 */
process.env.NEXTAUTH_SECRET ||= "v1-matrix-test-secret-0123456789abcdef0123456789";
const ORIGIN = "http://127.0.0.1:3999";
const ROOT = path.resolve(__dirname, "../..");
const users: Partial<Record<Role, { id: string; token: string; tokenId: string; cookie: string }>> = {};

beforeAll(async () => {
  const tag = randomUUID().slice(0, 8);
  for (const role of MATRIX_ROLES) {
    const u = await createUser({
      email: `${role}-${tag}@v1-matrix.test`,
      role,
      password: `${role}-v1-matrix-password`,
    });
    const actor = { id: u.id, email: u.email, name: null, role };
    const { token, view } = await createToken(
      actor,
      { requestId: `setup-${randomUUID()}`, ip: null },
      { name: `v1 matrix ${role}`, role, expiresInDays: 1 },
    );
    const sid = await createSession({ userId: u.id, method: "credentials", ip: "127.0.0.1" });
    const jwt = await encode({ token: { sub: u.id, sid, email: u.email }, secret: process.env.NEXTAUTH_SECRET! });
    users[role] = { id: u.id, token, tokenId: view.id, cookie: `${sessionCookieName()}=${jwt}` };
  }
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

async function call(row: RouteRow, auth: { token?: string; cookie?: string }, requestId: string) {
  const headers = new Headers({ "x-request-id": requestId, "x-forwarded-for": "127.0.0.1", origin: ORIGIN });
  if (auth.token) headers.set("authorization", `Bearer ${auth.token}`);
  if (auth.cookie) headers.set("cookie", auth.cookie);
  const mod = (await import(path.join(ROOT, `app/${row.file}`))) as Record<
    string,
    (req: Request, ctx: unknown) => Promise<Response>
  >;
  let body: string | undefined;
  if (row.body !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(row.body);
  }
  const res = await mod[row.method](new Request(`${ORIGIN}${row.url}`, { method: row.method, headers, body }), {
    params: Promise.resolve(row.params ?? {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: json, text, contentType: res.headers.get("content-type") };
}

const denialsOf = (requestId: string) => getDb().auditEvent.findMany({ where: { requestId, outcome: "denied" } });

describe("v1 token matrix", () => {
  it("has a row for every v1 route, and only v1 routes", () => {
    const v1 = discover().routes.filter((r) => r.file.startsWith("api/v1/"));
    expect(v1.map((r) => `${r.method} ${r.file}`).sort()).toEqual(
      TOKEN_MATRIX.map((r) => `${r.method} ${r.file}`).sort(),
    );
  });

  it("agrees with the permissions table", () => {
    for (const row of TOKEN_MATRIX.filter((r) => !r.public)) {
      expect([...row.roles].sort(), rowKey(row)).toEqual(
        [...(PERMISSIONS[row.permission as Permission] as readonly string[])].sort(),
      );
    }
  });
});

describe.each(TOKEN_MATRIX.map((r) => [rowKey(r), r] as const))("v1 %s", (_key, row) => {
  for (const role of MATRIX_ROLES) {
    const allowed = row.public || row.roles.includes(role);
    it(`${role} token: ${allowed ? "allowed" : "refused with 403 and audited with the token id"}`, async () => {
      const requestId = `v1-matrix-${randomUUID()}`;
      const out = await call(row, { token: users[role]!.token }, requestId);
      const denials = await denialsOf(requestId);
      if (allowed) {
        // Past authorization: whatever the minimal input then earns (a list, "not found", a bad body), never a refusal or a crash.
        expect(out.status, out.text.slice(0, 300)).not.toBe(401);
        expect(out.status, out.text.slice(0, 300)).not.toBe(403);
        expect(out.status, out.text.slice(0, 300)).toBeLessThan(500);
        expect(String(out.body.code ?? ""), out.text.slice(0, 300)).not.toMatch(/^(forbidden|unauthorized|internal):/);
        expect(denials).toEqual([]);
        return;
      }
      expect(out.status, out.text.slice(0, 300)).toBe(403);
      expect(out.contentType).toBe("application/problem+json");
      expect(out.body).toMatchObject({ status: 403, code: `forbidden:${row.permission}`, instance: requestId });
      expect(denials).toHaveLength(1);
      expect(denials[0]).toMatchObject({ action: row.audit, actorId: users[role]!.id, actorRole: role });
      expect(denials[0].details).toMatchObject({ tokenId: users[role]!.tokenId });
    });
  }

  it(`no token: ${row.public ? "public" : "401 problem details"}`, async () => {
    const out = await call(row, {}, `v1-matrix-anon-${randomUUID()}`);
    if (row.public) return expect(out.status).toBe(200);
    expect(out.status).toBe(401);
    expect(out.body).toMatchObject({ status: 401, code: "unauthorized:token" });
  });

  if (!row.public) {
    it("an admin's session cookie without a token: 401 (token routes never read cookies)", async () => {
      const out = await call(row, { cookie: users.admin!.cookie }, `v1-matrix-cookie-${randomUUID()}`);
      expect(out.status).toBe(401);
      expect(out.body).toMatchObject({ code: "unauthorized:token" });
    });
  }
});
