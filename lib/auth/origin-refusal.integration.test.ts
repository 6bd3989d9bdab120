import { randomUUID } from "node:crypto";
import { encode } from "next-auth/jwt";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/lib/db";
import { proxy } from "@/proxy";
import { sessionCookieName } from "./config";
import { createSession } from "./sessions";
import { createUser } from "./users";

/**
 * The real proxy() of proxy.ts on real Postgres: a server action, or a cookie-session route
 * handler's state change, sent without the console's own Origin is answered 403 before Next sees
 * it, and audited under the session's user. The same
 * request from the console's own origin goes on (`x-middleware-next`) to Next, which runs it. The
 * production build's answer, and that nothing ran, are in e2e/security.spec.ts.
 */
process.env.NEXTAUTH_SECRET ||= "origin-refusal-test-secret-0123456789abcdef0123";
const ORIGIN = "http://127.0.0.1:3000";
const ACTION_ID = "40c0ffee0123456789abcdef0123456789abcdef01";
let user: { id: string; email: string };
let cookie = "";

beforeAll(async () => {
  const u = await createUser({
    email: `origin-${randomUUID().slice(0, 8)}@it.test`,
    role: "admin",
    password: "origin-refusal-password-1",
  });
  user = { id: u.id, email: u.email };
  const sid = await createSession({ userId: u.id, method: "credentials", ip: "127.0.0.1" });
  const jwt = await encode({ token: { sub: u.id, sid, email: u.email }, secret: process.env.NEXTAUTH_SECRET! });
  cookie = `${sessionCookieName()}=${jwt}`;
});

afterAll(() => closeDb());

/** A server action call as the client router posts it, the socket's address filled in as Next does. */
function actionCall(path: string, headers: Record<string, string>) {
  return new NextRequest(`${ORIGIN}${path}`, {
    method: "POST",
    headers: {
      host: "127.0.0.1:3000",
      "x-forwarded-for": "198.18.7.9",
      "next-action": ACTION_ID,
      "content-type": "text/plain;charset=UTF-8",
      ...headers,
    },
    body: JSON.stringify([{ name: "minted", role: "admin", expiresInDays: 1 }]),
  });
}

const rowsOf = (requestId: string | null) =>
  getDb().auditEvent.findMany({ where: { requestId: requestId ?? "none" }, orderBy: { id: "asc" } });

describe("server actions from outside the console's own pages", () => {
  it.each([
    ["no Origin", {}, "missing"],
    ["the opaque `null` Origin", { origin: "null" }, "null"],
    ["another site's Origin", { origin: "https://evil.example" }, "foreign"],
  ] as const)("refuses %s with 403 forbidden:origin, audited under the session's user", async (_, origin, reason) => {
    const res = await proxy(actionCall("/profile", { cookie, ...origin }));
    expect(res.status).toBe(403);
    expect(res.headers.get("x-middleware-next")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({ ok: false, error: { code: "forbidden:origin" } });
    const requestId = res.headers.get("x-request-id");
    const rows = await rowsOf(requestId);
    expect(rows.map((r) => [r.action, r.outcome, r.actorId, r.actorEmail, r.actorRole, r.ip])).toEqual([
      ["auth.origin_refused", "denied", user.id, user.email, "admin", "198.18.7.9"],
    ]);
    expect(rows[0].details).toEqual({
      reason,
      origin: "origin" in origin ? origin.origin : null,
      method: "POST",
      path: "/profile",
      actionId: ACTION_ID,
    });
  });

  it("refuses a form's action posted to a page (no Next-Action header) from another site the same way", async () => {
    const req = new NextRequest(`${ORIGIN}/admin/users`, {
      method: "POST",
      headers: { host: "127.0.0.1:3000", origin: "https://evil.example", cookie },
      body: new URLSearchParams({ $ACTION_ID_40ab: "" }),
    });
    const res = await proxy(req);
    expect(res.status).toBe(403);
    const rows = await rowsOf(res.headers.get("x-request-id"));
    expect(rows.map((r) => [r.action, r.actorId, (r.details as { reason: string }).reason])).toEqual([
      ["auth.origin_refused", user.id, "foreign"],
    ]);
  });

  it("refuses without a session too, but writes no row: nobody was acted for", async () => {
    const res = await proxy(actionCall("/profile", { origin: "https://evil.example" }));
    expect(res.status).toBe(403);
    expect(await rowsOf(res.headers.get("x-request-id"))).toEqual([]);
    const forged = await proxy(actionCall("/profile", { cookie: `${sessionCookieName()}=not-a-jwt` }));
    expect(forged.status).toBe(403);
    expect(await rowsOf(forged.headers.get("x-request-id"))).toEqual([]);
  });

  it.each([
    ["POST", "/api/redrive/plan", {}, "missing"],
    ["POST", "/api/redrive/j1/cancel", { origin: "null" }, "null"],
    ["DELETE", "/api/triage/scans/s1", { origin: "https://evil.example" }, "foreign"],
  ] as const)(
    "refuses a session route handler's %s %s without the console's Origin, audited",
    async (method, path, origin, reason) => {
      const res = await proxy(
        new NextRequest(`${ORIGIN}${path}`, {
          method,
          headers: {
            host: "127.0.0.1:3000",
            "x-forwarded-for": "198.18.7.9",
            cookie,
            "content-type": "application/json",
            ...origin,
          },
          body: "{}",
        }),
      );
      expect(res.status).toBe(403);
      expect(res.headers.get("x-middleware-next")).toBeNull();
      expect(await res.json()).toMatchObject({ ok: false, error: { code: "forbidden:origin" } });
      const rows = await rowsOf(res.headers.get("x-request-id"));
      expect(rows.map((r) => [r.action, r.outcome, r.actorId])).toEqual([["auth.origin_refused", "denied", user.id]]);
      expect(rows[0].details).toEqual({
        reason,
        origin: "origin" in origin ? origin.origin : null,
        method,
        path,
        actionId: null,
      });
    },
  );

  it("lets the console's own pages and route calls through to Next, and leaves reads, v1 and Auth.js alone", async () => {
    const own = await proxy(actionCall("/profile", { cookie, origin: ORIGIN }));
    expect(own.headers.get("x-middleware-next")).toBe("1");
    expect(own.status).toBe(200);
    const read = await proxy(new NextRequest(`${ORIGIN}/profile`, { headers: { host: "127.0.0.1:3000", cookie } }));
    expect(read.headers.get("x-middleware-next")).toBe("1");
    const post = (path: string, headers: Record<string, string>) =>
      proxy(
        new NextRequest(`${ORIGIN}${path}`, {
          method: "POST",
          headers: { host: "127.0.0.1:3000", "content-type": "application/json", ...headers },
          body: "{}",
        }),
      );
    const ownRoute = await post("/api/redrive/plan", { cookie, origin: ORIGIN });
    // The v1 API reads bearer tokens only, and Auth.js checks its own CSRF token.
    const v1 = await post("/api/v1/redrives/plan", { authorization: "Bearer dlq_x" });
    const signIn = await post("/api/auth/callback/credentials", {});
    for (const r of [own, read, ownRoute, v1, signIn]) {
      expect(r.headers.get("x-middleware-next")).toBe("1");
      expect(await rowsOf(r.headers.get("x-request-id"))).toEqual([]);
    }
  });
});
