import { test, expect } from "@playwright/test";
import { signIn, dlqPath, DEMO, E2E_USERS, loadSession } from "./fixtures";

test("the audit page opens on operations and administration, shows access one click away, and filters by a listed action", async ({
  page,
}) => {
  // Through the form, not the saved session: this test's own sign-in is one of the rows it looks for.
  await signIn(page, "operator");
  await page.goto(dlqPath(DEMO.rejectedDlq));
  await page.getByTestId("letter-row").first().getByRole("link").first().click();
  await expect(page.getByTestId("death-row").first()).toBeVisible();
  // An administration act of the same user: an API token of their own.
  const tokenName = `audit-category-${Date.now()}`;
  await page.goto("/profile");
  await page.getByTestId("token-name").fill(tokenName);
  await page.getByTestId("create-token-submit").click();
  await expect(page.getByTestId("new-token")).toBeVisible();

  await page.goto(`/audit?actor=${encodeURIComponent(E2E_USERS.operator.email)}`);
  const rows = page.getByTestId("audit-row");
  const categories = page.getByTestId("audit-category");
  await expect(categories.getByRole("link", { name: "Operations and administration" })).toHaveAttribute(
    "aria-current",
    "true",
  );
  // The default view: the token's creation, none of the sign-ins and views under it.
  await expect(rows.filter({ hasText: "token.create" }).first()).toBeVisible();
  const shown = async () => new Set(await rows.evaluateAll((r) => r.map((x) => x.getAttribute("data-action"))));
  for (const hidden of ["letter.view", "dlq.open", "auth.sign_in", "audit.view"])
    expect(await shown()).not.toContain(hidden);

  // One click: the access entries, and nothing else.
  await categories.getByRole("link", { name: "Access", exact: true }).click();
  await expect(page).toHaveURL(/category=access/);
  await expect(rows.filter({ hasText: "letter.view" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "dlq.open" }).first()).toBeVisible();
  await expect(rows.filter({ hasText: "auth.sign_in" }).first()).toBeVisible();
  expect(await shown()).not.toContain("token.create");

  // The action filter is a list of readable actions; choosing one applies it.
  const action = page.getByTestId("audit-action");
  await expect(action.locator("optgroup[label='Access'] option", { hasText: "Viewed a letter" })).toHaveCount(1);
  await expect(
    action.locator("optgroup[label='Administration'] option", { hasText: "Created an API token" }),
  ).toHaveCount(1);
  await action.selectOption({ label: "Viewed a letter" });
  await expect(page).toHaveURL(/action=letter\.view/);
  await expect(action).toHaveValue("letter.view");
  await expect(rows.first()).toBeVisible();
  expect(await shown()).toEqual(new Set(["letter.view"]));

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
