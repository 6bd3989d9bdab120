import { expect, test, type Page, type Request } from "@playwright/test";
import { DEMO, dlqPath, loadSession } from "./fixtures";

/**
 * Links prefetch on intent, not on sight: a page of letters, findings or DLQs does not ask the
 * server for every linked page while it loads (each is rendered on demand), and a link the user
 * points at is fetched ahead of the click.
 */
function prefetches(page: Page): Request[] {
  const seen: Request[] = [];
  page.on("request", (r) => {
    if (r.headers()["next-router-prefetch"] === "1") seen.push(r);
  });
  return seen;
}

test.beforeEach(async ({ page }) => {
  await loadSession(page, "operator");
});

test("a DLQ's letters page loads without prefetching its letters; pointing at one fetches it before the click", async ({
  page,
}) => {
  const seen = prefetches(page);
  await page.goto(dlqPath(DEMO.rejectedDlq));
  const rows = page.getByTestId("letter-row");
  await expect(rows.first()).toBeVisible();
  expect(await rows.count()).toBeGreaterThan(3);
  await page.waitForLoadState("networkidle");
  expect(seen.map((r) => new URL(r.url()).pathname)).toEqual([]);

  const link = rows.nth(1).getByRole("link").first();
  const href = (await link.getAttribute("href")) ?? "";
  expect(href).toContain("/letters/");
  const fetched = page.waitForRequest(
    (r) => r.headers()["next-router-prefetch"] === "1" && new URL(r.url()).pathname === href,
  );
  await link.hover();
  await fetched;
  await link.click();
  await expect(page).toHaveURL(new RegExp(`${href.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
});

test("the overview and the findings load without prefetching the pages they link to", async ({ page }) => {
  const seen = prefetches(page);
  await page.goto("/");
  await expect(page.getByTestId("dlq-row").first()).toBeVisible();
  await page.waitForLoadState("networkidle");
  await page.goto("/findings");
  await page.waitForLoadState("networkidle");
  expect(seen.map((r) => new URL(r.url()).pathname)).toEqual([]);
});
