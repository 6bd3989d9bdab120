import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encode } from "next-auth/jwt";
import { AsyncLocalStorage } from "node:async_hooks";
import { queryAudit } from "@/lib/audit";
import { sessionCookieName } from "@/lib/auth/config";
import { PERMISSIONS, type Permission } from "@/lib/auth/permissions";
import { createSession } from "@/lib/auth/sessions";
import { createUser } from "@/lib/auth/users";
import {
  discover,
  exportedNames,
  loadingFilesAbove,
  MATRIX,
  MATRIX_ROLES,
  MISSING_ROW_HELP,
  missingRows,
  NONE,
  rowKey,
  staleRows,
  type ActionRow,
  type MatrixRow,
  type Role,
  type RouteRow,
} from "@/test/access-matrix";
import { inRequestScope } from "@/test/request-scope";

/**
 * The authorization matrix (test/access-matrix.ts), walked for every route handler and server
 * action × every role and a request without a session. Handlers and actions are called directly,
 * inside Next's own request scope (the request store `cookies()` and `headers()` read), with a real
 * session cookie per role: a next-auth JWT naming a live session row in Postgres, as sign-in makes.
 * A refused role must get `forbidden:<permission>` and leave a "denied" audit row under its request
 * id; an allowed role must get past authorization (whatever the minimal input then earns) with no
 * denial on record; no session must get "unauthorized:session" (401).
 */
// What `next start` sets up before any request scope exists (next/dist/server/node-environment).
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
process.env.NEXTAUTH_SECRET ||= "matrix-test-secret-0123456789abcdef0123456789";
const ORIGIN = "http://127.0.0.1:3999";
process.env.NEXTAUTH_URL = ORIGIN;

const ROOT = path.resolve(__dirname, "../..");
const cookies: Partial<Record<Role, string>> = {};
const users: Partial<Record<Role, { id: string; email: string }>> = {};

beforeAll(async () => {
  const tag = randomUUID().slice(0, 8);
  for (const role of MATRIX_ROLES) {
    const u = await createUser({ email: `${role}-${tag}@matrix.test`, role, password: `${role}-matrix-password-long` });
    const sid = await createSession({ userId: u.id, method: "credentials", ip: "127.0.0.1" });
    const jwt = await encode({ token: { sub: u.id, sid, email: u.email }, secret: process.env.NEXTAUTH_SECRET! });
    cookies[role] = `${sessionCookieName()}=${jwt}`;
    users[role] = { id: u.id, email: u.email };
  }
});

afterAll(async () => {
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

interface Outcome {
  status: number;
  /** The error code, when the answer is a refusal or failure. */
  code: string | null;
  text: string;
}

function requestFor(row: MatrixRow, role: Role | null, requestId: string, origin = ORIGIN): Request {
  const method = row.kind === "route" ? row.method : "POST";
  const url = `${ORIGIN}${row.kind === "route" ? row.url : "/"}`;
  const headers = new Headers({
    "x-request-id": requestId,
    "x-forwarded-for": "127.0.0.1",
    origin,
    host: new URL(ORIGIN).host,
  });
  if (role) headers.set("cookie", cookies[role]!);
  let body: string | undefined;
  if (row.kind === "route" && method !== "GET" && row.body !== undefined) {
    body = typeof row.body === "string" ? row.body : JSON.stringify(row.body);
    headers.set(
      "content-type",
      typeof row.body === "string" ? "application/x-www-form-urlencoded" : "application/json",
    );
  }
  return new Request(url, { method, headers, body });
}

async function call(
  row: RouteRow | ActionRow,
  role: Role | null,
  requestId: string,
  origin?: string,
): Promise<Outcome> {
  const req = requestFor(row, role, requestId, origin);
  const mod = (await import(path.join(ROOT, row.kind === "route" ? `app/${row.file}` : row.file))) as Record<
    string,
    unknown
  >;
  if (row.kind === "route") {
    const handler = mod[row.method] as (req: Request, ctx: unknown) => Promise<Response>;
    const { NextRequest } = await import("next/server");
    const res = await inRequestScope(req, () =>
      handler(new NextRequest(req), { params: Promise.resolve(row.params ?? {}) }),
    );
    const text = await res.text();
    let code: string | null = null;
    try {
      code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? null;
    } catch {
      /* not JSON: a stream, a redirect, an empty 204 */
    }
    return { status: res.status, code, text };
  }
  const fn = mod[row.name] as (...args: unknown[]) => Promise<{ ok: boolean; error?: { code: string } }>;
  const r = await inRequestScope(req, () => fn(...row.args));
  return { status: r.ok ? 200 : 0, code: r.ok ? null : (r.error?.code ?? "unknown"), text: JSON.stringify(r) };
}

async function auditRows(role: Role, action: string | undefined, requestId: string) {
  const { rows } = await queryAudit({ actor: users[role]!.email, ...(action ? { action } : {}) }, { limit: 200 });
  return rows.filter((r) => r.requestId === requestId);
}

describe("the matrix covers the source", () => {
  const found = discover();

  it("finds the route handlers, server actions and pages it is meant to find", () => {
    // Guards the scanner itself: if these drop, discovery broke, not the app.
    expect(found.routes.length).toBeGreaterThanOrEqual(24);
    expect(found.actions.length).toBeGreaterThanOrEqual(15);
    expect(found.pages.length).toBeGreaterThanOrEqual(13);
    expect(found.actions).toContainEqual({
      file: "app/dlqs/[connectionId]/[queue]/redrive/actions.ts",
      name: "startBulkAction",
    });
    expect(found.routes).toContainEqual({ file: "api/auth/[...nextauth]/route.ts", method: "POST" });
  });

  it("has a row for every route handler method, server action and page", () => {
    const missing = missingRows(found);
    expect(missing, `${MISSING_ROW_HELP}\nMissing:\n  ${missing.join("\n  ")}`).toEqual([]);
  });

  it("puts no loading.tsx above a page that refuses some role (a streamed refusal could not answer 403)", () => {
    for (const row of MATRIX) {
      if (row.kind !== "page" || row.public || MATRIX_ROLES.every((r) => row.roles.includes(r))) continue;
      expect(loadingFilesAbove(row.file), rowKey(row)).toEqual([]);
    }
  });

  it("has no row for something that no longer exists", () => {
    expect(staleRows(found)).toEqual([]);
  });

  it("reads exports the way the modules really export them", async () => {
    for (const file of new Set([...found.routes.map((r) => `app/${r.file}`), ...found.actions.map((a) => a.file)])) {
      const { readFileSync } = await import("node:fs");
      const scanned = exportedNames(readFileSync(path.join(ROOT, file), "utf8")).sort();
      const real = Object.keys(await import(path.join(ROOT, file)))
        .filter((k) => k !== "__esModule")
        .sort();
      const routeConfig = new Set([
        "dynamic",
        "revalidate",
        "runtime",
        "fetchCache",
        "preferredRegion",
        "maxDuration",
        "dynamicParams",
        "generateStaticParams",
      ]);
      expect(
        scanned.filter((n) => !routeConfig.has(n)),
        file,
      ).toEqual(real.filter((n) => !routeConfig.has(n)));
    }
  });

  it("agrees with the permissions table: each row's roles are exactly its permission's roles", () => {
    for (const row of MATRIX) {
      if (row.public) continue;
      expect(row.permission, rowKey(row)).toBeDefined();
      const table = PERMISSIONS[row.permission as Permission] as readonly string[] | undefined;
      expect(table, `${rowKey(row)}: unknown permission ${row.permission}`).toBeDefined();
      expect([...row.roles].sort(), rowKey(row)).toEqual([...table!].sort());
    }
  });
});

const callable = MATRIX.filter((r): r is RouteRow | ActionRow => r.kind !== "page");

describe.each(callable.map((r) => [rowKey(r), r] as const))("%s", (_key, row) => {
  for (const role of MATRIX_ROLES) {
    const allowed = row.roles.includes(role);
    it(`${role}: ${allowed ? "allowed" : "refused and audited"}`, async () => {
      const requestId = `matrix-${randomUUID()}`;
      const out = await call(row, role, requestId);
      const denials = (await auditRows(role, undefined, requestId)).filter((r) => r.outcome === "denied");
      if (allowed) {
        expect(out.status, `${out.status} ${out.text.slice(0, 300)}`).not.toBe(401);
        expect(out.status, `${out.status} ${out.text.slice(0, 300)}`).not.toBe(403);
        expect(out.code ?? "", out.text.slice(0, 300)).not.toMatch(/^(forbidden|unauthorized|internal):/);
        expect(out.status, out.text.slice(0, 300)).toBeLessThan(500);
        expect(denials, "an allowed call left a denial on record").toEqual([]);
        return;
      }
      expect(out.code, out.text.slice(0, 300)).toBe(`forbidden:${row.permission}`);
      if (row.kind === "route") expect(out.status).toBe(403);
      // The refusal says nothing but the refusal.
      const body = JSON.parse(out.text) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(["error", "ok"]);
      expect(body.ok).toBe(false);
      expect(denials, `no denied audit row for ${role}`).toHaveLength(1);
      expect(denials[0].action).toBe(row.audit);
      expect(denials[0].actorRole).toBe(role);
      expect(denials[0].actorId).toBe(users[role]!.id);
      // Nothing else happened under that request.
      expect(await auditRows(role, undefined, requestId)).toHaveLength(1);
    });
  }

  // Authorization comes before validation: a refused caller is refused and recorded whatever it sent.
  const refused = MATRIX_ROLES.filter((r) => !row.roles.includes(r));
  const sendsInput = row.kind === "action" ? row.args.length > 0 : row.method !== "GET";
  // (A variant is its input: without it the row is another row.)
  if (refused.length > 0 && sendsInput && !row.variant) {
    it(`${refused[0]} with malformed input: still refused and audited`, async () => {
      const role = refused[0];
      const requestId = `matrix-junk-${randomUUID()}`;
      const junk: RouteRow | ActionRow =
        row.kind === "action" ? { ...row, args: [null] } : { ...row, body: "{not json" };
      const out = await call(junk, role, requestId);
      expect(out.code, out.text.slice(0, 300)).toBe(`forbidden:${row.permission}`);
      const denials = (await auditRows(role, undefined, requestId)).filter((r) => r.outcome === "denied");
      expect(denials.map((d) => d.action)).toEqual([row.audit]);
    });
  }

  // State-changing routes take requests from the console's own pages only (server actions: Next's own check).
  if (row.kind === "route" && row.method !== "GET" && !row.public) {
    it(`${row.roles[row.roles.length - 1]} from another origin: refused`, async () => {
      const out = await call(
        row,
        row.roles[row.roles.length - 1],
        `matrix-origin-${randomUUID()}`,
        "https://evil.example",
      );
      expect(out.status, out.text.slice(0, 300)).toBe(403);
      expect(out.code).toBe("forbidden:origin");
    });
  }

  it(`no session: ${row.public ? "public" : "refused (401)"}`, async () => {
    const out = await call(row, null, `matrix-anon-${randomUUID()}`);
    if (row.public) {
      expect(out.status).not.toBe(401);
      expect(out.status).not.toBe(403);
      expect(out.status).toBeLessThan(500);
      return;
    }
    expect(out.code, out.text.slice(0, 300)).toBe("unauthorized:session");
    if (row.kind === "route") expect(out.status).toBe(401);
  });
});

/**
 * No route answers differently for a right and a wrong guess of a masked value. Every
 * GET route that takes a DLQ in its query string is asked, by each role it allows, with filters
 * that guess a masked header, a masked secret in the exception text and the payload's SHA-256;
 * a new route that filters the index cannot reopen the oracle without failing here.
 */
describe("no filter, count or digest of any route tells a masked value apart", () => {
  const ORACLE = { connectionId: NONE.connectionId, queue: `matrix.oracle.${randomUUID().slice(0, 8)}` };
  const SECRET = "s3cr3t-Matrix";
  const AUTH = "Basic bWF0cml4OnMzY3IzdA==";
  const RAW_SHA = "ab".repeat(32);
  const filterable = callable.filter(
    (r): r is RouteRow =>
      r.kind === "route" && r.method === "GET" && r.url.includes(`queue=${encodeURIComponent(NONE.queue)}`),
  );

  beforeAll(async () => {
    const { upsertLetters } = await import("@/lib/triage/index-store");
    const { loadMaskingConfig } = await import("@/lib/masking/store");
    const { maskingHashKey } = await import("@/lib/masking/key");
    const { maskedSearchText, searchMaskingFor } = await import("@/lib/triage/masked-search");
    const search = searchMaskingFor(await loadMaskingConfig(), ORACLE.connectionId, ORACLE.queue, maskingHashKey());
    const message = `login refused password=${SECRET}`;
    const rows = [0, 1].map((i) => ({
      letter_id: `oracle-${i}`,
      position: i,
      kafka_partition: null,
      kafka_offset: null,
      message_id: `oracle-${i}`,
      dead_lettered_at: new Date().toISOString(),
      reason: "rejected",
      origin_queue: "orders",
      exception_class: "com.acme.LoginFailed",
      exception_message: message,
      exception_search: maskedSearchText(message, search),
      search_version: search.version,
      normalized_message: message,
      top_frame: null,
      group_key: "g-oracle",
      group_label: "LoginFailed",
      group_basis: "exception",
      disposition: "unknown",
      rule_id: null,
      receive_count: 1,
      headers: { authorization: AUTH },
      body_size: 2,
      sha256: RAW_SHA,
      fingerprint: "f".repeat(32),
      payload: null,
      payload_key_id: null,
      payload_truncated: false,
      handled_outcome: null,
    }));
    await upsertLetters(ORACLE.connectionId, ORACLE.queue, randomUUID(), rows);
  });

  const guesses: Array<[string, string, string]> = [
    [
      "a masked header",
      `header=${encodeURIComponent(`authorization:${AUTH}`)}`,
      `header=${encodeURIComponent("authorization:Basic d3Jvbmc=")}`,
    ],
    ["a prefix of a masked secret", `q=${encodeURIComponent(SECRET.slice(0, 4))}`, `q=${encodeURIComponent("zzzz")}`],
    ["the payload's SHA-256", `q=${RAW_SHA}`, `q=${"cd".repeat(32)}`],
  ];

  /** What an answer tells: its status, error code and how many letters it counts or carries. */
  function measure(out: Outcome): unknown {
    let count: unknown = null;
    try {
      const body = JSON.parse(out.text) as unknown;
      if (Array.isArray(body)) count = body.length;
      else {
        const data = (body as { data?: Record<string, unknown> }).data;
        count = data?.count ?? (Array.isArray(data?.letters) ? data.letters.length : null);
      }
    } catch {
      count = out.text.split("\n").filter(Boolean).length;
    }
    return { status: out.status, code: out.code, count };
  }

  it("finds the routes it must ask", () => {
    expect(filterable.map((r) => r.file)).toEqual(
      expect.arrayContaining(["api/triage/letters/route.ts", "api/triage/export/route.ts"]),
    );
  });

  for (const row of filterable) {
    for (const [what, right, wrong] of guesses) {
      it(`${rowKey(row)}: ${what}`, async () => {
        for (const role of row.roles) {
          const ask = async (extra: string) => {
            const url = `${row.url.replace(`queue=${encodeURIComponent(NONE.queue)}`, `queue=${encodeURIComponent(ORACLE.queue)}`)}&${extra}`;
            return call({ ...row, url }, role, `matrix-oracle-${randomUUID()}`);
          };
          const [a, b] = [await ask(right), await ask(wrong)];
          expect(measure(a), `${role} ${a.text.slice(0, 200)}`).toEqual(measure(b));
          expect(a.text).not.toContain(RAW_SHA);
          expect(a.text).not.toContain(SECRET);
        }
      });
    }
  }
});

/**
 * No repair preview or plan tells a masked value apart. The group repair preview and the
 * single-letter repair plan are asked through their server actions, by an admin who has not
 * revealed the letter and by every other role, with a right and a wrong guess of a value the
 * default masking rules hide (a patch that tests or replaces it, an edit of the payload or of a
 * masked header): each pair must get the same answer. A new repair preview or plan action fails
 * "asks every repair preview and plan" until its pairs are added here.
 */
describe("no repair preview or plan tells a masked value apart", () => {
  const CONN = "matrix-repair";
  const CARD = "4111111111111111";
  // Not digits alone: the "not.toContain" checks below would find four digits by chance in a digest.
  const CVV = "Q5309V";
  const TOKEN = "Bearer zxcvbnmasdfghjklqwertyu";
  const order = (cvv: string) => JSON.stringify({ order: 1, note: "call back", card: { number: CARD, cvv } });
  const previousConfig = process.env.DLQ_CONSOLE_CONFIG;
  let kit: import("@/lib/brokers/rabbitmq/test-kit").RabbitKit;
  let restore: () => Promise<void>;
  const target = { connectionId: CONN, queue: "", groupKey: "", letterId: "" };

  beforeAll(async () => {
    const { RabbitKit, testConfig } = await import("@/lib/brokers/rabbitmq/test-kit");
    const { useConsoleConfig } = await import("@/test/console-config");
    kit = new RabbitKit();
    restore = (
      await useConsoleConfig({
        connections: [testConfig({ id: CONN })],
        repair: [{ connection: CONN, queue: `${kit.prefix}.dlq.*` }],
      })
    ).restore;
    const { dlq } = await kit.dlqByReject(
      [0, 1].map((i) => ({
        body: new TextEncoder().encode(order(CVV)),
        messageId: `oracle-${i}`,
        headers: { "x-exception-class": "com.acme.CardDeclined", authorization: TOKEN },
      })),
    );
    target.queue = dlq;
    const { jobStore } = await import("@/lib/jobs/store");
    const { JobWorker } = await import("@/lib/jobs/worker");
    const { scanHandler } = await import("@/lib/triage/scan");
    const kind = `scan-matrix-${randomUUID().slice(0, 8)}`;
    await jobStore().enqueue({ kind: kind as "scan", connectionId: CONN, queue: dlq, params: {} });
    await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: kind, leaseMs: 10_000 }).runOnce();
    const { getDb } = await import("@/lib/db");
    const groups = await getDb().$queryRawUnsafe<Array<{ group_key: string }>>(
      `SELECT DISTINCT group_key FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
      CONN,
      dlq,
    );
    expect(groups).toHaveLength(1);
    target.groupKey = groups[0].group_key;
    const { adapterFor } = await import("@/lib/use-case/connection");
    target.letterId = (await adapterFor(CONN).browse(dlq, { offset: 0, limit: 5 })).letters[0].id;
  });

  afterAll(async () => {
    await kit.cleanup();
    await restore();
    if (previousConfig !== undefined) {
      process.env.DLQ_CONSOLE_CONFIG = previousConfig;
      (await import("@/lib/config")).resetConfigCache();
    }
  });

  const preview = (patch: unknown) => () => ({
    connectionId: CONN,
    queue: target.queue,
    selection: { kind: "group", groupKey: target.groupKey },
    patch,
  });
  const plan = (edit: Record<string, unknown>) => () => ({
    connectionId: CONN,
    queue: target.queue,
    letterId: target.letterId,
    ...edit,
  });
  const testOp = (path: string, value: unknown) => ({ kind: "json-patch", operations: [{ op: "test", path, value }] });
  const cases: Array<[action: string, what: string, right: () => unknown, wrong: () => unknown]> = [
    [
      "previewGroupRepairAction",
      "a test of a masked card number",
      preview(testOp("/card/number", CARD)),
      preview(testOp("/card/number", "4000000000000002")),
    ],
    [
      "previewGroupRepairAction",
      "a test of a masked CVV",
      preview(testOp("/card/cvv", CVV)),
      preview(testOp("/card/cvv", "Q1234V")),
    ],
    [
      "previewGroupRepairAction",
      "a replace of a masked CVV",
      preview({ kind: "json-patch", operations: [{ op: "replace", path: "/card/cvv", value: CVV }] }),
      preview({ kind: "json-patch", operations: [{ op: "replace", path: "/card/cvv", value: "Q1234V" }] }),
    ],
    [
      "previewGroupRepairAction",
      "a merge patch of a masked CVV",
      preview({ kind: "merge-patch", patch: { card: { cvv: CVV } } }),
      preview({ kind: "merge-patch", patch: { card: { cvv: "Q1234V" } } }),
    ],
    [
      "planRepairAction",
      "the payload as it is or with another CVV",
      plan({ body: { kind: "json", text: order(CVV) } }),
      plan({ body: { kind: "json", text: order("Q1234V") } }),
    ],
    [
      "planRepairAction",
      "a masked header as it is or changed",
      plan({ setHeaders: { authorization: TOKEN } }),
      plan({ setHeaders: { authorization: "Bearer wrongwrongwrongwrongwron" } }),
    ],
  ];

  it("asks every repair preview and plan", () => {
    const asked = new Set(cases.map(([action]) => action));
    const previews = callable
      .filter((r): r is ActionRow => r.kind === "action" && /repair/i.test(r.file) && /(preview|plan)/i.test(r.name))
      .map((r) => r.name);
    expect(previews.length).toBeGreaterThanOrEqual(2);
    expect([...new Set(previews)].sort()).toEqual([...asked].sort());
  });

  for (const [action, what, right, wrong] of cases) {
    it(`${action}: ${what}`, async () => {
      const row = callable.find((r): r is ActionRow => r.kind === "action" && r.name === action)!;
      for (const role of MATRIX_ROLES) {
        const ask = (input: unknown) => call({ ...row, args: [input] }, role, `matrix-repair-oracle-${randomUUID()}`);
        const [a, b] = [await ask(right()), await ask(wrong())];
        expect(a, `${role} ${a.text.slice(0, 300)}`).toEqual(b);
        expect(a.text).not.toContain(CARD);
        expect(a.text).not.toContain(CVV);
        expect(a.text).not.toContain("zxcvbnm");
        if (role !== "admin") expect(a.code).toBe("forbidden:letter:repair");
      }
    });
  }
});
