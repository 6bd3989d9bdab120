import { test, expect, request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { E2E_USERS } from "./fixtures";

/**
 * DLQ_AUTH_CREDENTIALS=off removes password sign-in on the server, not only in the UI: a second
 * console server (same build, same database) started with it off has no credentials provider, and
 * a correct email and password POSTed straight to next-auth's callback get no session. The same
 * request to the main server (credentials on) does get one, so the test can tell the two apart.
 */
const root = path.resolve(__dirname, "..");
const BASE_PORT = Number(process.env.E2E_PORT ?? 3100);
const MAIN_URL = `http://127.0.0.1:${BASE_PORT}`;
const OFF_PORT = Number(process.env.E2E_CREDENTIALS_OFF_PORT ?? BASE_PORT + 5);
const OFF_URL = `http://127.0.0.1:${OFF_PORT}`;

let server: ChildProcess | null = null;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  // Own process group, so stopping it stops `next start`'s children too.
  server = spawn(
    process.execPath,
    [
      path.join(root, "node_modules/next/dist/bin/next"),
      "start",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(OFF_PORT),
    ],
    {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NEXTAUTH_URL: OFF_URL,
        NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? "e2e-secret-not-for-production-0123456789abcdef",
        NEXT_TELEMETRY_DISABLED: "1",
        NEXT_MANUAL_SIG_HANDLE: "true",
        DATABASE_URL: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e",
        DLQ_CONSOLE_CONFIG: process.env.DLQ_CONSOLE_CONFIG ?? "e2e/dlq-console.e2e.config.json",
        DLQ_AUTH_CREDENTIALS: "off",
      },
    },
  );
  server.stderr?.on("data", (c: Buffer) => process.stderr.write(`[credentials-off] ${c}`));
  const until = Date.now() + 120_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the credentials-off server exited with ${server.exitCode}`);
    if (Date.now() > until) throw new Error(`${OFF_URL} did not answer`);
    const up = await fetch(`${OFF_URL}/api/health`)
      .then((r) => r.status < 600)
      .catch(() => false);
    if (up) break;
    await new Promise((r) => setTimeout(r, 250));
  }
});

test.afterAll(async () => {
  const child = server;
  if (!child?.pid || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
      resolve();
    }, 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    process.kill(-child.pid!, "SIGTERM");
  });
});

/** Signs in the way next-auth's own client does: CSRF token, then a form POST to the credentials callback. */
async function postCredentials(api: APIRequestContext, baseURL: string) {
  const { csrfToken } = (await (await api.get(`${baseURL}/api/auth/csrf`)).json()) as { csrfToken: string };
  const res = await api.post(`${baseURL}/api/auth/callback/credentials`, {
    form: {
      csrfToken,
      email: E2E_USERS.admin.email,
      password: E2E_USERS.admin.password,
      callbackUrl: `${baseURL}/`,
      json: "true",
    },
    headers: { Origin: baseURL },
    maxRedirects: 0,
  });
  // One context per server (cookies are not scoped by port).
  const session = (await api.storageState()).cookies.find((c) => c.name.endsWith("next-auth.session-token"));
  const dlqs = await api.get(`${baseURL}/api/dlqs`);
  return { status: res.status(), session: session ?? null, dlqsStatus: dlqs.status() };
}

test("with DLQ_AUTH_CREDENTIALS=off the sign-in page has no password form", async ({ page }) => {
  await page.goto(`${OFF_URL}/signin`);
  await expect(page.getByRole("heading").first()).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveCount(0);
  await expect(page.getByLabel("Email")).toHaveCount(0);
  await expect(page.getByText(/No sign-in method is configured/)).toBeVisible();
});

test("with DLQ_AUTH_CREDENTIALS=off the server has no credentials provider and a correct password gets no session", async () => {
  const providers = (await (await fetch(`${OFF_URL}/api/auth/providers`)).json()) as Record<string, unknown>;
  expect(Object.keys(providers)).not.toContain("credentials");

  const off = await playwrightRequest.newContext();
  try {
    const r = await postCredentials(off, OFF_URL);
    expect(r.session, "a session cookie was set").toBeNull();
    expect(r.dlqsStatus).toBe(401);
  } finally {
    await off.dispose();
  }

  // The same request with credentials on (the main e2e server) signs in: the check above can fail.
  const on = await playwrightRequest.newContext();
  try {
    const r = await postCredentials(on, MAIN_URL);
    expect(r.session, "no session cookie with credentials on").not.toBeNull();
    expect(r.dlqsStatus).toBe(200);
  } finally {
    await on.dispose();
  }
});
