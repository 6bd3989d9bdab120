import { mkdirSync } from "node:fs";
import path from "node:path";
import { test as setup, expect } from "@playwright/test";
import { ROLES } from "@/lib/auth/permissions";
import { authFile, E2E_USERS } from "./fixtures";

/**
 * The setup project (playwright.config.ts): signs each role in once through the sign-in form and
 * saves its storage state (the session cookie) to authFile(role). Tests that are not about signing
 * in start from that state (loadSession) instead of the form: one scrypt check and
 * one sign-in round trip per role per run instead of one per test. Sessions are server-side rows
 * (auth_sessions) that only their own sign-out, idle time or age end, and every one of those tests
 * (auth, security, audit) signs in afresh or as a user of its own, so these stay valid for the run.
 */
for (const role of ROLES) {
  setup(`sign in as ${role} and save the session`, async ({ page }) => {
    const user = E2E_USERS[role];
    // Lands on a light page: the DLQ list asks every broker.
    await page.goto("/signin?callbackUrl=%2Fprofile");
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/profile$/);
    await expect(page.getByTestId("current-user")).toContainText(role);
    const file = authFile(role);
    mkdirSync(path.dirname(file), { recursive: true });
    await page.context().storageState({ path: file });
  });
}
