import { test, expect, type APIRequestContext, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { loadSession, dlqPath, DEMO, serverActionId, callServerAction } from "./fixtures";
import {
  discover,
  MATRIX,
  MATRIX_ROLES,
  MISSING_ROW_HELP,
  missingRows,
  rowKey,
  type PageRow,
  type RouteRow,
} from "../test/access-matrix";

/**
 * The authorization matrix (test/access-matrix.ts) over raw HTTP against the production server:
 * every route handler × every role and no session (status codes, refusal bodies that carry nothing
 * but the refusal, a denied audit row per refusal), every page × every role (refused roles get HTTP
 * 403, see the refusal and no rows of data; no session is sent to sign-in). lib/auth/matrix.integration.test.ts
 * walks the same table through the handlers and server actions directly.
 */
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const ORIGIN = `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`;

async function deniedRows(
  requestIds: string[],
): Promise<Array<{ request_id: string; action: string; actor_role: string }>> {
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    // The e2e server trusts loopback as its proxy (playwright.config.ts): the test's X-Request-Id is the row's.
    const r = await client.query(
      "SELECT request_id, action, actor_role FROM audit_log WHERE outcome = 'denied' AND request_id = ANY($1)",
      [requestIds],
    );
    return r.rows;
  } finally {
    await client.end();
  }
}

const routes = MATRIX.filter((r): r is RouteRow => r.kind === "route");
const pages = MATRIX.filter((r): r is PageRow => r.kind === "page");

// Each test stands alone (its own request ids, nothing changed): they may run in both workers at once.
test.describe.configure({ mode: "parallel" });

async function callRoute(request: APIRequestContext, row: RouteRow, requestId: string) {
  const headers: Record<string, string> = { "x-request-id": requestId };
  if (row.method !== "GET") headers.Origin = ORIGIN;
  const res = await request.fetch(row.url, {
    method: row.method,
    headers,
    data: row.method === "GET" ? undefined : row.body,
    maxRedirects: 0,
  });
  return { status: res.status(), text: await res.text() };
}

test("every route handler, server action and page in the source has a row in the matrix", () => {
  const missing = missingRows(discover());
  expect(missing, `${MISSING_ROW_HELP}\nMissing:\n  ${missing.join("\n  ")}`).toEqual([]);
});

for (const role of MATRIX_ROLES) {
  test(`routes as ${role}: allowed or refused as the matrix says, refusals audited`, async ({ page }) => {
    test.setTimeout(180_000);
    await loadSession(page, role);
    const refusals: Array<{ id: string; row: RouteRow }> = [];
    for (const row of routes) {
      const id = `e2e-matrix-${randomUUID()}`;
      const { status, text } = await callRoute(page.request, row, id);
      const what = `${rowKey(row)} as ${role}: ${status} ${text.slice(0, 200)}`;
      if (row.roles.includes(role)) {
        expect([401, 403], what).not.toContain(status);
        expect(status, what).toBeLessThan(500);
        continue;
      }
      expect(status, what).toBe(403);
      // The refusal and nothing else: no rows, counts, names or payloads.
      const body = JSON.parse(text) as { ok: boolean; error: { code: string; message: string } };
      expect(Object.keys(body).sort(), what).toEqual(["error", "ok"]);
      expect(Object.keys(body.error).sort(), what).toEqual(["code", "message"]);
      expect(body.error.code, what).toBe(`forbidden:${row.permission}`);
      refusals.push({ id, row });
    }
    const audited = await deniedRows(refusals.map((r) => r.id));
    for (const { id, row } of refusals) {
      const rows = audited.filter((a) => a.request_id === id);
      expect(
        rows.map((a) => [a.action, a.actor_role]),
        `${rowKey(row)} as ${role}: denied audit row`,
      ).toEqual([[row.audit, role]]);
    }
  });
}

test("routes without a session: 401 with no data, except the public ones", async ({ request }) => {
  test.setTimeout(180_000);
  for (const row of routes) {
    const { status, text } = await callRoute(request, row, `e2e-matrix-anon-${randomUUID()}`);
    const what = `${rowKey(row)}: ${status} ${text.slice(0, 200)}`;
    if (row.public) {
      expect([401, 403], what).not.toContain(status);
      expect(status, what).toBeLessThan(500);
      continue;
    }
    expect(status, what).toBe(401);
    const body = JSON.parse(text) as { ok: boolean; error: { code: string } };
    expect(Object.keys(body).sort(), what).toEqual(["error", "ok"]);
    expect(body.error.code, what).toBe("unauthorized:session");
  }
});

/** A rendered data row (letter-row, audit-row, user-row, group-row...), in HTML or escaped in flight data. */
const DATA_ROW = /data-testid=\\?"[a-z-]+-row\\?"/g;

async function openPage(page: Page, row: PageRow, requestId: string) {
  await page.setExtraHTTPHeaders({ "x-request-id": requestId });
  const res = await page.goto(row.url);
  await page.setExtraHTTPHeaders({});
  return res;
}

for (const role of MATRIX_ROLES) {
  test(`pages as ${role}: shown or refused as the matrix says, refusals audited and without data`, async ({ page }) => {
    test.setTimeout(240_000);
    await loadSession(page, role);
    const refusals: Array<{ id: string; row: PageRow }> = [];
    for (const row of pages) {
      const id = `e2e-matrix-page-${randomUUID()}`;
      const res = await openPage(page, row, id);
      const what = `${rowKey(row)} as ${role}`;
      expect(res?.status(), what).toBeLessThan(500);
      if (row.public) continue;
      expect(new URL(page.url()).pathname, `${what}: sent to sign-in`).not.toBe("/signin");
      if (row.roles.includes(role)) {
        expect([401, 403], what).not.toContain(res?.status());
        await expect(page.getByTestId("forbidden"), what).toHaveCount(0);
        await expect(page.getByTestId("redrive-forbidden"), what).toHaveCount(0);
        continue;
      }
      expect(res?.status(), `${what}: HTTP status of the refusal`).toBe(403);
      await expect(page.getByTestId(row.deniedTestId ?? "forbidden"), what).toBeVisible();
      // A refused page shows the refusal, not the data behind it.
      expect(await page.locator('main [data-testid$="-row"]').count(), `${what}: data rows on a refused page`).toBe(0);
      // Nor in the raw response (HTML and the flight data in it).
      const rawRes = await page.request.get(row.url);
      expect(rawRes.status(), `${what}: HTTP status of the raw response`).toBe(403);
      const raw = await rawRes.text();
      expect(raw.match(DATA_ROW) ?? [], `${what}: data rows in the raw response`).toEqual([]);
      refusals.push({ id, row });
    }
    const audited = await deniedRows(refusals.map((r) => r.id));
    for (const { id, row } of refusals) {
      const rows = audited.filter((a) => a.request_id === id);
      expect(
        rows.map((a) => [a.action, a.actor_role]),
        `${rowKey(row)} as ${role}: denied audit row`,
      ).toEqual([[row.audit, role]]);
    }
  });
}

test("pages without a session send to sign-in and come back, with no data on the way", async ({ page }) => {
  test.setTimeout(240_000);
  for (const row of pages) {
    const raw = await page.request.get(row.url, { maxRedirects: 0 });
    expect(raw.status(), rowKey(row)).toBeLessThan(400);
    expect((await raw.text()).match(DATA_ROW) ?? [], `${rowKey(row)}: data rows in the raw response`).toEqual([]);
    await page.goto(row.url);
    // The redirect may come in the streamed response (the app has a loading UI): wait for it.
    await page.waitForURL((u) => u.pathname === "/signin");
    const url = new URL(page.url());
    expect(url.pathname, rowKey(row)).toBe("/signin");
    if (row.public) continue;
    expect(url.searchParams.get("callbackUrl") ?? "", rowKey(row)).toContain(new URL(row.url, ORIGIN).pathname);
    await expect(page.getByTestId("letter-row")).toHaveCount(0);
  }
});

/**
 * A viewer who bypasses the UI and calls each mutating server action directly over HTTP (the
 * Next-Action protocol, as a browser would) is refused by the server, and every refusal lands in
 * the audit log. (Every action × role is walked by lib/auth/matrix.integration.test.ts.)
 */
const MUTATING_ACTIONS = [
  {
    name: "createUserAction",
    page: "/admin/users",
    args: [{ email: "mallory@e2e.test", role: "admin", password: "mallory-password-123" }],
    permission: "users:manage",
    action: "user.create",
  },
  {
    name: "updateUserAction",
    page: "/admin/users",
    args: [{ id: "00000000-0000-0000-0000-000000000000", role: "admin" }],
    permission: "users:manage",
    action: "user.update",
  },
  {
    name: "confirmRiskyReadAction",
    page: dlqPath("demo.shipping.dlq"),
    args: [{ connectionId: DEMO.connectionId, queue: "demo.shipping.dlq" }],
    permission: "dlq:browse-risky",
    action: "dlq.read_risky_confirmed",
  },
  {
    name: "startSafeMoveAction",
    page: dlqPath("demo.shipping.dlq"),
    args: [{ connectionId: DEMO.connectionId, queue: "demo.shipping.dlq", target: "demo.shipping.dlq.safe" }],
    permission: "dlq:safe-move",
    action: "dlq.safe_move_start",
  },
  { name: "verifyAuditAction", page: "/audit", args: [], permission: "audit:verify", action: "audit.verify" },
] as const;

test("a viewer's direct calls to mutating server actions are refused and audited", async ({ page, browser }) => {
  await loadSession(page, "viewer");
  const started = new Date(Date.now() - 1000).toISOString();
  for (const a of MUTATING_ACTIONS) {
    const res = await callServerAction(page.request, a.page, serverActionId(a.name), [...a.args]);
    expect(res.status, a.name).toBe(200);
    expect(res.text, a.name).toContain(`forbidden:${a.permission}`);
    expect(res.text, a.name).not.toContain('"ok":true');
  }

  // The user was not created.
  const admin = await (await browser.newContext()).newPage();
  await loadSession(admin, "admin");
  await admin.goto("/admin/users");
  await expect(admin.getByTestId("user-row").first()).toBeVisible();
  await expect(admin.getByText("mallory@e2e.test")).toHaveCount(0);

  // Every refusal is on record with the viewer as actor.
  await admin.goto(`/audit?actor=viewer%40e2e.test&outcome=denied&from=${encodeURIComponent(started)}`);
  const rows = admin.getByTestId("audit-row");
  await expect(rows.first()).toBeVisible();
  const actions = await rows.evaluateAll((r) => r.map((x) => x.getAttribute("data-action")));
  for (const a of MUTATING_ACTIONS) expect(actions, a.action).toContain(a.action);
});
