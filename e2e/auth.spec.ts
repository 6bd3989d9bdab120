import { test, expect } from "@playwright/test";
import { signIn, E2E_USERS } from "./fixtures";
import { ROLES } from "@/lib/auth/permissions";

test("an anonymous visitor is sent to sign-in and comes back after", async ({ page }) => {
  await page.goto("/audit");
  await expect(page).toHaveURL(/\/signin\?callbackUrl=%2Faudit/);
  await page.getByLabel("Email").fill(E2E_USERS.admin.email);
  await page.getByLabel("Password").fill(E2E_USERS.admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/audit/);
});

test("a wrong password is refused with a clear message", async ({ page }) => {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(E2E_USERS.operator.email);
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-in-error")).toHaveText("Wrong email or password.");
  await expect(page).toHaveURL(/\/signin/);
});

for (const role of ROLES) {
  test(`${role} signs in, sees the DLQ list and their role, and signs out`, async ({ page }) => {
    await signIn(page, role);
    await page.goto("/");
    await expect(page.getByTestId("dlq-row").first()).toBeVisible();
    await expect(page.getByTestId("current-user")).toContainText(role);
    await page.getByTestId("sign-out").click();
    await expect(page).toHaveURL(/\/signin/);
    await page.goto("/");
    await expect(page).toHaveURL(/\/signin/);
  });
}
