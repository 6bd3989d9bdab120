import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createToken } from "@/lib/api-tokens";
import { sessionCookieName } from "@/lib/auth/config";
import { createSession } from "@/lib/auth/sessions";
import {
  auditRowsOf,
  callV1,
  expectDocumented as documented,
  v1Document,
  v1Users,
  type V1Handler,
  type V1User,
} from "@/test/api-v1";
import { GET as auditGET } from "@/app/api/v1/audit/route";
import { GET as dlqsGET } from "@/app/api/v1/dlqs/route";
import { GET as openapiGET } from "@/app/api/v1/openapi.json/route";

/**
 * /api/v1 on the console's database (real Postgres) and the configured brokers: real users, real
 * tokens made by lib/api-tokens, route handlers called with a Request as Next calls them. The
 * answers are checked against the served OpenAPI document with validators from npm.
 */
process.env.NEXTAUTH_SECRET ||= "api-v1-test-secret-0123456789abcdef0123456789";
const ROOT = path.resolve(__dirname, "../..");
type Handler = V1Handler;

let users: Record<"viewer" | "operator", V1User>;
const actors = {} as Record<"viewer" | "operator", V1User["actor"]>;
const tokens = {} as Record<"viewer" | "operator", { token: string; id: string }>;
let viewerCookie = "";

beforeAll(async () => {
  users = await v1Users("api-v1", ["viewer", "operator"] as const);
  for (const role of ["viewer", "operator"] as const) {
    actors[role] = users[role].actor;
    tokens[role] = { token: users[role].token, id: users[role].tokenId };
  }
  const sid = await createSession({ userId: actors.viewer.id, method: "credentials", ip: "127.0.0.1" });
  const jwt = await encode({
    token: { sub: actors.viewer.id, sid, email: actors.viewer.email },
    secret: process.env.NEXTAUTH_SECRET!,
  });
  viewerCookie = `${sessionCookieName()}=${jwt}`;
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

const call = (handler: Handler, url: string, opts: { token?: string; cookie?: string; authorization?: string } = {}) =>
  callV1(handler, url, opts);
const documentOf = v1Document;
const expectDocumented = (pathKey: string, _status: number, res: Response, body: unknown) =>
  documented("get", pathKey, res, body);

describe("authentication", () => {
  it("lists DLQs with a bearer token, in the documented shape", async () => {
    const { res, body } = await call(dlqsGET as Handler, "/api/v1/dlqs", { token: tokens.viewer.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(Array.isArray(body.connections)).toBe(true);
    expect((body.connections as unknown[]).length).toBeGreaterThan(0);
    await expectDocumented("/api/v1/dlqs", 200, res, body);
  });

  it("refuses a session cookie without a token: 401 problem details, nothing read", async () => {
    const { res, body } = await call(dlqsGET as Handler, "/api/v1/dlqs", { cookie: viewerCookie });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(body).toMatchObject({
      status: 401,
      code: "unauthorized:token",
      type: "urn:dlq-console:problem:unauthorized",
    });
    expect(body).not.toHaveProperty("connections");
  });

  it("answers a bad token with 401 problem details, the request id as instance, and never echoes the token", async () => {
    const bad = `${tokens.viewer.token.slice(0, -4)}AAAA`;
    const { res, body, text, requestId } = await call(dlqsGET as Handler, "/api/v1/dlqs", { token: bad });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(body).toMatchObject({ title: "Unauthorized", status: 401, instance: requestId });
    expect(typeof body.detail).toBe("string");
    expect(text).not.toContain(bad.slice(5, 20));
    await expectDocumented("/api/v1/dlqs", 401, res, body);
    const basic = await call(dlqsGET as Handler, "/api/v1/dlqs", { authorization: "Basic dXNlcjpwYXNz" });
    expect(basic.res.status).toBe(401);
  });
});

describe("the audit log", () => {
  it("refuses a viewer token with 403 problem details, and audits the refusal with the token id", async () => {
    const { res, body, requestId } = await call(auditGET as Handler, "/api/v1/audit", { token: tokens.viewer.token });
    expect(res.status).toBe(403);
    expect(body).toMatchObject({ status: 403, type: "urn:dlq-console:problem:forbidden" });
    expect(String(body.code)).toMatch(/^forbidden:/);
    await expectDocumented("/api/v1/audit", 403, res, body);
    const rows = await auditRowsOf(requestId);
    expect(rows.map((r) => [r.action, r.outcome, r.actorId])).toEqual([["audit.view", "denied", actors.viewer.id]]);
    expect(rows[0].details).toMatchObject({ tokenId: tokens.viewer.id });
    expect(JSON.stringify({ ...rows[0], id: String(rows[0].id) })).not.toContain(tokens.viewer.token.slice(13));
    // Refused before its query is read: a bad query earns a viewer the same 403, not a 400 that describes the query.
    expect(
      (await call(auditGET as Handler, "/api/v1/audit?limit=abc", { token: tokens.viewer.token })).res.status,
    ).toBe(403);
  });

  it("pages by cursor for an operator token, in the documented shape, audited with the token id", async () => {
    // The viewer's own rows (token.create, two refusals) are the pages read back.
    for (let i = 0; i < 2; i++)
      expect((await call(auditGET as Handler, "/api/v1/audit", { token: tokens.viewer.token })).res.status).toBe(403);
    const first = await call(
      auditGET as Handler,
      `/api/v1/audit?limit=2&actor=${encodeURIComponent(actors.viewer.email!)}`,
      { token: tokens.operator.token },
    );
    expect(first.res.status).toBe(200);
    await expectDocumented("/api/v1/audit", 200, first.res, first.body);
    const items = first.body.items as Array<{ id: string; actorEmail: string }>;
    expect(items).toHaveLength(2);
    expect(items.every((r) => r.actorEmail === actors.viewer.email)).toBe(true);
    expect(typeof first.body.nextCursor).toBe("string");
    const second = await call(
      auditGET as Handler,
      `/api/v1/audit?limit=2&actor=${encodeURIComponent(actors.viewer.email!)}&cursor=${first.body.nextCursor}`,
      {
        token: tokens.operator.token,
      },
    );
    expect(second.res.status).toBe(200);
    const again = second.body.items as Array<{ id: string }>;
    expect(again.length).toBeGreaterThan(0);
    expect(again.some((r) => items.some((i) => i.id === r.id))).toBe(false);
    const rows = await auditRowsOf(first.requestId);
    expect(rows.map((r) => [r.action, r.outcome])).toEqual([["audit.view", "success"]]);
    expect(rows[0].details).toMatchObject({ tokenId: tokens.operator.id });
  });

  it("answers a bad query with 400 problem details", async () => {
    const { res, body } = await call(auditGET as Handler, "/api/v1/audit?limit=9999&outcome=maybe", {
      token: tokens.operator.token,
    });
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ code: "bad_request:query", status: 400 });
    expect(String(body.detail)).toContain("limit");
    await expectDocumented("/api/v1/audit", 400, res, body);
  });
});

describe("the rate limit", () => {
  it("answers a token over its limit with 429 and Retry-After", async () => {
    const before = process.env.DLQ_API_RATE_PER_MINUTE;
    process.env.DLQ_API_RATE_PER_MINUTE = "2";
    try {
      const { token } = await createToken(
        actors.viewer,
        { requestId: `setup-${randomUUID()}`, ip: null },
        { name: "v1 rate", role: "viewer", expiresInDays: 1 },
      );
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof call>> | null = null;
      for (let i = 0; i < 3; i++) {
        last = await call(auditGET as Handler, "/api/v1/audit", { token });
        statuses.push(last.res.status);
      }
      expect(statuses).toEqual([403, 403, 429]);
      expect(Number(last!.res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(last!.body).toMatchObject({
        status: 429,
        code: "too_many_requests:token",
        type: "urn:dlq-console:problem:too_many_requests",
      });
      await expectDocumented("/api/v1/audit", 429, last!.res, last!.body);
    } finally {
      if (before === undefined) delete process.env.DLQ_API_RATE_PER_MINUTE;
      else process.env.DLQ_API_RATE_PER_MINUTE = before;
    }
  });
});

describe("the OpenAPI document", () => {
  it("is served without a token and is a valid OpenAPI 3.1 document", async () => {
    const { res, body, text } = await call(openapiGET as Handler, "/api/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    const result = await new Validator().validate(body);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(text).not.toMatch(/dlqc_[0-9A-Za-z]{20}|postgres(ql)?:\/\/|amqp:\/\//);
  });

  it("documents every route file under app/api/v1 with each method it exports", async () => {
    const d = await documentOf();
    const dir = path.join(ROOT, "app/api/v1");
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith("route.ts"));
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      const apiPath = `/api/v1/${path.dirname(f)}`.replace(/\[(\.\.\.)?([^\]]+)\]/g, "{$2}");
      const methods = [
        ...readFileSync(path.join(dir, f), "utf8").matchAll(
          /export (?:const|async function|function) (GET|POST|PUT|PATCH|DELETE)\b/g,
        ),
      ].map((m) => m[1]);
      expect(methods.length, f).toBeGreaterThan(0);
      for (const m of methods)
        expect(d.paths[apiPath]?.[m.toLowerCase()], `${m} ${apiPath} (app/api/v1/${f})`).toBeDefined();
    }
  });

  it("has every documented operation's real answers validated against it by some integration test", async () => {
    // Read from the test sources: each call `expectDocumented("<method>", "<path>", …)` (or with a
    // path constant of the same file) validates a real answer of that operation against the document.
    const files = (readdirSync(path.join(ROOT, "lib"), { recursive: true }) as string[]).filter((f) =>
      f.endsWith(".integration.test.ts"),
    );
    const covered = new Set<string>();
    for (const f of files) {
      const src = readFileSync(path.join(ROOT, "lib", f), "utf8");
      const consts = new Map([...src.matchAll(/const (\w+) = "(\/api\/v1[^"]*)"/g)].map((m) => [m[1], m[2]]));
      for (const m of src.matchAll(/expectDocumented\(\s*"(get|post|put|patch|delete)",\s*(?:"([^"]+)"|(\w+))/g)) {
        const p = m[2] ?? consts.get(m[3]);
        if (p) covered.add(`${m[1]} ${p}`);
      }
      // This file's own shorthand: GETs by path.
      for (const m of src.matchAll(/expectDocumented\(\s*"(\/api\/v1[^"]*)",\s*\d{3}/g)) covered.add(`get ${m[1]}`);
    }
    const d = await documentOf();
    const documented = Object.entries(d.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) =>
      Object.keys(ops).map((m) => `${m} ${p}`),
    );
    // The document itself is checked whole by the OpenAPI validator above.
    const missing = documented.filter((op) => op !== "get /api/v1/openapi.json" && !covered.has(op));
    expect(missing, "operations no integration test validates a real answer of").toEqual([]);
    expect(documented.length).toBeGreaterThan(25);
  });
});
