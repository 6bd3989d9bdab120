import { expect, type Page, type APIRequestContext, type BrowserContext } from "@playwright/test";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Role } from "@/lib/auth/permissions";
import { E2E_USERS } from "./users";

export { E2E_USERS };

/** Demo DLQs made by scripts/seed-demo.ts through real dead-lettering. */
export const DEMO = {
  connectionId: "local-rabbitmq",
  rejectedDlq: "demo.orders.dlq",
} as const;

/**
 * Signs in through the sign-in form, as a person does, and waits for the signed-in header. Only
 * for tests about signing in, signing out or sessions (and the setup project, e2e/auth.setup.ts):
 * every other test starts from the role's saved session with `loadSession`.
 */
export async function signIn(page: Page, role: Role) {
  await signInWith(page, E2E_USERS[role]);
}

/** `signIn` for any account, e.g. a test's own user. */
export async function signInWith(page: Page, user: { email: string; password: string }) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByTestId("sign-out")).toBeVisible();
}

/**
 * Where e2e/auth.setup.ts keeps each role's storage state (its session cookie): under .cache
 * (ignored by git), one folder per e2e port so two checkouts' runs do not share sessions.
 */
export function authFile(role: Role): string {
  return path.resolve(__dirname, "../.cache/e2e-auth", String(process.env.E2E_PORT ?? 3100), `${role}.json`);
}

/**
 * Puts the role's session from the setup project (e2e/auth.setup.ts) into the page's context, in
 * place of any session it had: the page is signed in as `role` without the sign-in form. The
 * sessions are shared by every test of the run, so a test that signs out, ends or ages a session
 * must sign in with `signIn` (or as a user of its own) instead.
 */
export async function loadSession(page: Page, role: Role): Promise<void> {
  const state = JSON.parse(readFileSync(authFile(role), "utf8")) as {
    cookies: Parameters<BrowserContext["addCookies"]>[0];
  };
  await page.context().clearCookies();
  await page.context().addCookies(state.cookies);
}

export function dlqPath(queue: string, connectionId: string = DEMO.connectionId) {
  return `/dlqs/${encodeURIComponent(connectionId)}/${encodeURIComponent(queue)}`;
}

/**
 * Finds a server action's id in the production build's manifest by its exported name, so a test
 * can call the action directly over HTTP, the way a hostile client would, bypassing the UI.
 */
export function serverActionId(exportedName: string): string {
  const file = path.resolve(process.env.NEXT_DIST_DIR || ".next", "server/server-reference-manifest.json");
  const manifest = JSON.parse(readFileSync(file, "utf8")) as { node: Record<string, unknown> };
  for (const [id, entry] of Object.entries(manifest.node)) {
    if (JSON.stringify(entry).includes(`"exportedName":"${exportedName}"`)) return id;
  }
  throw new Error(`server action ${exportedName} not found in ${file}`);
}

/** Calls a server action with the page's cookies, as the browser would, and returns the raw response text. */
export async function callServerAction(
  request: APIRequestContext,
  pagePath: string,
  actionId: string,
  args: unknown[],
) {
  const res = await request.post(pagePath, {
    headers: {
      "Next-Action": actionId,
      "Content-Type": "text/plain;charset=UTF-8",
      Accept: "text/x-component",
      Origin: `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`,
    },
    data: JSON.stringify(args),
  });
  return { status: res.status(), text: await res.text() };
}
