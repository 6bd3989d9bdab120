import { test, expect } from "@playwright/test";
import { signIn, dlqPath, DEMO, serverActionId, callServerAction } from "./fixtures";

/**
 * A viewer who bypasses the UI and calls each mutating server action (and the guarded routes)
 * directly is refused by the server, and every refusal lands in the audit log.
 */
const MUTATING_ACTIONS = [
  { name: "createUserAction", page: "/admin/users", args: [{ email: "mallory@e2e.test", role: "admin", password: "mallory-password-123" }], permission: "users:manage", action: "user.create" },
  { name: "updateUserAction", page: "/admin/users", args: [{ id: "00000000-0000-0000-0000-000000000000", role: "admin" }], permission: "users:manage", action: "user.update" },
  { name: "confirmRiskyReadAction", page: dlqPath("demo.shipping.dlq"), args: [{ connectionId: DEMO.connectionId, queue: "demo.shipping.dlq" }], permission: "dlq:browse-risky", action: "dlq.read_risky_confirmed" },
  { name: "verifyAuditAction", page: "/audit", args: [], permission: "audit:verify", action: "audit.verify" },
] as const;

test("a viewer's direct calls to mutating server actions are refused and audited", async ({ page, browser }) => {
  await signIn(page, "viewer");
  const started = new Date(Date.now() - 1000).toISOString();
  for (const a of MUTATING_ACTIONS) {
    const res = await callServerAction(page.request, a.page, serverActionId(a.name), [...a.args]);
    expect(res.status, a.name).toBe(200);
    expect(res.text, a.name).toContain(`forbidden:${a.permission}`);
    expect(res.text, a.name).not.toContain('"ok":true');
  }
  // Routes refuse too.
  expect((await page.request.get("/api/audit/export?format=csv")).status()).toBe(403);
  expect((await page.request.get("/api/audit/export?format=json")).status()).toBe(403);

  // The user was not created.
  const admin = await (await browser.newContext()).newPage();
  await signIn(admin, "admin");
  await admin.goto("/admin/users");
  await expect(admin.getByTestId("user-row").first()).toBeVisible();
  await expect(admin.getByText("mallory@e2e.test")).toHaveCount(0);

  // Every refusal is on record with the viewer as actor.
  await admin.goto(`/audit?actor=viewer%40e2e.test&outcome=denied&from=${encodeURIComponent(started)}`);
  const rows = admin.getByTestId("audit-row");
  await expect(rows.first()).toBeVisible();
  const actions = await rows.evaluateAll((r) => r.map((x) => x.getAttribute("data-action")));
  for (const a of MUTATING_ACTIONS) expect(actions, a.action).toContain(a.action);
  expect(actions).toContain("audit.export");
});

test("a request without a session gets no data from guarded routes", async ({ request }) => {
  expect((await request.get("/api/audit/export?format=json")).status()).toBe(401);
  expect((await request.get("/api/dlqs")).status()).toBe(401);
  const letter = await request.get(`/api${dlqPath(DEMO.rejectedDlq)}/letters/m-b3JkZXItMTAwMQ/payload`);
  expect(letter.status()).toBe(401);
});
