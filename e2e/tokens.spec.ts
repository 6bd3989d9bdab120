import { randomUUID } from "node:crypto";
import { test, expect } from "@playwright/test";
import { loadSession } from "./fixtures";

/**
 * Personal API tokens in the browser: a user creates one on their profile page, sees it
 * once with a copy button, finds it listed by prefix (never again in full), and revokes it; an
 * admin sees everyone's. Token names are hostile text and must stay text.
 */
test("an operator creates a token, sees it once, and revokes it; its hostile name stays text", async ({ page }) => {
  await loadSession(page, "operator");
  await page.goto("/");
  await page.getByTestId("nav-profile").click();
  await expect(page).toHaveURL(/\/profile$/);
  await expect(page.getByTestId("profile-role")).toHaveText("operator");
  // A role above the user's own is not even offered (the server refuses it too: lib/api-tokens tests).
  await expect(page.getByTestId("token-role").locator("option")).toHaveText(["viewer", "operator"]);

  const name = `<img src=x onerror="window.__xss=1"> ci ${randomUUID().slice(0, 8)}`;
  await page.getByTestId("token-name").fill(name);
  await page.getByTestId("token-role").selectOption("operator");
  await page.getByTestId("token-expiry").selectOption("30");
  await page.getByTestId("create-token-submit").click();

  const shown = page.getByTestId("new-token-value");
  await expect(shown).toBeVisible();
  const token = (await shown.textContent())!.trim();
  expect(token).toMatch(/^dlqc_[0-9A-Za-z]{49}$/);
  await expect(page.getByTestId("new-token")).toContainText("shown this once");
  await expect(page.getByTestId("copy-token")).toBeVisible();

  const row = page.getByTestId("token-row").filter({ hasText: name });
  await expect(row).toHaveCount(1);
  await expect(row).toContainText(token.slice(0, 13));
  await expect(row).toHaveAttribute("data-state", "active");
  await expect(row.getByTestId("token-name-cell")).toHaveText(name);
  await expect(row.locator("img")).toHaveCount(0);
  expect(await page.evaluate(() => (window as { __xss?: number }).__xss)).toBeUndefined();

  // Once means once: after a reload the page holds the prefix only.
  await page.reload();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  expect(await page.content()).not.toContain(token.slice(13));
  await expect(page.getByTestId("token-row").filter({ hasText: name })).toContainText(token.slice(0, 13));

  const again = page.getByTestId("token-row").filter({ hasText: name });
  await again.getByTestId("revoke-token").click();
  await again.getByTestId("revoke-token-confirm").click();
  await expect(page.getByTestId("token-row").filter({ hasText: name })).toHaveAttribute("data-state", "revoked");
});

test("a viewer may only mint viewer tokens; an admin lists everyone's tokens with their owners", async ({
  page,
  browser,
}) => {
  await loadSession(page, "viewer");
  await page.goto("/profile");
  await expect(page.getByTestId("token-role").locator("option")).toHaveText(["viewer"]);
  const name = `viewer script ${randomUUID().slice(0, 8)}`;
  await page.getByTestId("token-name").fill(name);
  await page.getByTestId("create-token-submit").click();
  await expect(page.getByTestId("new-token-value")).toBeVisible();
  await expect(page.getByTestId("all-tokens-link")).toHaveCount(0);

  const admin = await browser.newPage();
  await loadSession(admin, "admin");
  await admin.goto("/profile");
  await admin.getByTestId("all-tokens-link").click();
  await expect(admin).toHaveURL(/\/admin\/tokens$/);
  const row = admin.getByTestId("token-row").filter({ hasText: name });
  await expect(row).toContainText("viewer@e2e.test");
  await row.getByTestId("revoke-token").click();
  await row.getByTestId("revoke-token-confirm").click();
  await expect(admin.getByTestId("token-row").filter({ hasText: name })).toHaveAttribute("data-state", "revoked");
  await expect(admin.getByTestId("token-row").filter({ hasText: name })).toContainText("by admin@e2e.test");
  await admin.close();

  await page.reload();
  await expect(page.getByTestId("token-row").filter({ hasText: name })).toHaveAttribute("data-state", "revoked");
});
