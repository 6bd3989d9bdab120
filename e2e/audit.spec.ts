import { test, expect } from "@playwright/test";
import { signIn, dlqPath, DEMO, E2E_USERS, loadSession } from "./fixtures";

test("the audit page shows sign-in, DLQ opened and letter viewed, filters, and exports", async ({ page }) => {
  // Through the form, not the saved session: this test's own sign-in is one of the rows it looks for.
  await signIn(page, "operator");
  await page.goto(dlqPath(DEMO.rejectedDlq));
  await page.getByTestId("letter-row").first().getByRole("link").first().click();
  await expect(page.getByTestId("death-row").first()).toBeVisible();

  await page.goto(`/audit?actor=${encodeURIComponent(E2E_USERS.operator.email)}`);
  const rows = page.getByTestId("audit-row");
  await expect(rows.filter({ hasText: "letter.view" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "dlq.open" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "auth.sign_in" }).first()).toBeVisible();

  // Filter by action: only that action remains.
  await page.goto(`/audit?action=letter.view&queue=${encodeURIComponent(DEMO.rejectedDlq)}`);
  await expect(rows.first()).toBeVisible();
  const actions = await rows.evaluateAll((r) => r.map((x) => x.getAttribute("data-action")));
  expect(actions.length).toBeGreaterThan(0);
  expect(new Set(actions)).toEqual(new Set(["letter.view"]));

  const csv = await page.request.get(`/api/audit/export?format=csv&action=letter.view`);
  expect(csv.status()).toBe(200);
  expect(csv.headers()["content-type"]).toContain("text/csv");
  const lines = (await csv.text()).trim().split("\n");
  expect(lines.length).toBeGreaterThan(1);
  expect(lines.slice(1).every((l) => l.includes("letter.view"))).toBe(true);

  const json = await page.request.get(`/api/audit/export?format=json&action=letter.view`);
  expect(json.status()).toBe(200);
  const body = await json.json();
  const list = Array.isArray(body) ? body : body.rows;
  expect(list.length).toBeGreaterThan(0);
  expect(list.every((r: { action: string }) => r.action === "letter.view")).toBe(true);
});

test("a failed sign-in is on record", async ({ page, browser }) => {
  const other = await browser.newPage();
  await other.goto("/signin");
  await other.getByLabel("Email").fill("intruder@e2e.test");
  await other.getByLabel("Password").fill("guess-guess-guess");
  await other.getByRole("button", { name: "Sign in" }).click();
  await expect(other.getByTestId("sign-in-error")).toBeVisible();
  await other.close();

  await loadSession(page, "admin");
  await page.goto(`/audit?action=auth.sign_in_failed&actor=intruder`);
  await expect(page.getByTestId("audit-row").first()).toContainText("intruder@e2e.test");
});
