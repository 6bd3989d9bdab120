import { test, expect, type Page } from "@playwright/test";
import pg from "pg";
import { OIDC_CONSOLE_URL, OIDC_NAME, startOidcServers } from "./oidc/servers";

/**
 * Single sign-on through a local OpenID Connect provider (scripts/oidc-test-idp.ts), against a
 * second console server configured for it (e2e/oidc/servers.ts starts and stops both).
 */
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
let stopServers: (() => Promise<void>) | null = null;

test.describe.configure({ mode: "serial" });
test.use({ baseURL: OIDC_CONSOLE_URL });

test.beforeAll(async () => {
  test.setTimeout(180_000);
  stopServers = await startOidcServers();
});

test.afterAll(async () => {
  await stopServers?.();
});

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function ssoSignIn(page: Page, login: string, from = "/") {
  await page.goto(from);
  await expect(page).toHaveURL(/\/signin/);
  await page.getByRole("button", { name: `Sign in with ${OIDC_NAME}` }).click();
  // The provider's own (development) login form: any password.
  await page.locator("input[name=login]").fill(login);
  await page.locator("input[name=password]").fill("any-password");
  await page.locator("button[type=submit]").click();
}

test("the sign-in page offers the provider by name beside the password form", async ({ page }) => {
  await page.goto("/signin");
  await expect(page.getByRole("button", { name: `Sign in with ${OIDC_NAME}` })).toBeVisible();
  await expect(page.getByLabel("Email")).toBeVisible();
});

test("an admin group member signs in, is created as admin, reads the audit log, and the sign-in is audited", async ({
  page,
}) => {
  const started = new Date();
  // On a re-run against the same database the user exists: demote it so the sign-in re-maps it.
  await sql("update users set role = 'viewer' where email = 'admin-sso@sso.test'");
  await ssoSignIn(page, "admin-sso", "/audit");
  await expect(page).toHaveURL(/\/audit/);
  await expect(page.getByTestId("current-user")).toContainText("admin");
  await expect(page.getByTestId("audit-row").first()).toBeVisible();
  const [user] = await sql<{ role: string; password_hash: string | null }>(
    "select role, password_hash from users where email = 'admin-sso@sso.test'",
  );
  expect(user).toEqual({ role: "admin", password_hash: null });
  const rows = await sql<{ action: string; details: Record<string, unknown> }>(
    "select action, details from audit_log where actor_email = 'admin-sso@sso.test' and at >= $1 order by id",
    [started],
  );
  const signIn = rows.find((r) => r.action === "auth.sign_in");
  expect(signIn?.details).toMatchObject({ method: "oidc", groups: ["dlq-admins"] });
  expect(rows.find((r) => r.action === "user.provisioned")?.details).toMatchObject({ method: "oidc", role: "admin" });
});

test("a viewer group member gets the viewer role and cannot read the audit log", async ({ page }) => {
  await ssoSignIn(page, "viewer-sso");
  await expect(page.getByTestId("current-user")).toContainText("viewer");
  await page.goto("/audit");
  await expect(page.getByText("403 · You cannot read the audit log.")).toBeVisible();
});

test("the role is re-mapped from the groups at every sign-in", async ({ page }) => {
  // Someone made the operator an admin by hand; the identity provider still says dlq-operators.
  await sql(
    "insert into users (id, email, role, updated_at) values (gen_random_uuid(), 'ops-sso@sso.test', 'admin', now()) on conflict (email) do update set role = 'admin'",
  );
  await ssoSignIn(page, "ops-sso");
  await expect(page.getByTestId("current-user")).toContainText("operator");
  const [row] = await sql<{ details: Record<string, unknown> }>(
    "select details from audit_log where actor_email = 'ops-sso@sso.test' and action = 'user.provisioned' order by id desc limit 1",
  );
  expect(row.details).toMatchObject({ created: false, previousRole: "admin", role: "operator" });
});

test("a user in no mapped group is refused with a message, and the refusal is audited", async ({ page }) => {
  await ssoSignIn(page, "nobody-sso");
  await expect(page).toHaveURL(/\/signin\?error=NoRole/);
  await expect(page.getByTestId("sign-in-page-error")).toContainText("not in any group");
  const users = await sql("select 1 from users where email = 'nobody-sso@sso.test'");
  expect(users).toHaveLength(0);
  const rows = await sql<{ outcome: string; details: Record<string, unknown> }>(
    "select outcome, details from audit_log where actor_email = 'nobody-sso@sso.test' and action = 'auth.sign_in_refused'",
  );
  expect(rows.at(-1)).toMatchObject({
    outcome: "denied",
    details: { method: "oidc", reason: "no_role", groups: ["other"] },
  });
});
