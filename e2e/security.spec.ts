import { test, expect, request as playwrightRequest, type Page, type APIRequestContext } from "@playwright/test";
import { randomBytes, scryptSync } from "node:crypto";
import amqp from "amqplib";
import pg from "pg";
import {
  callServerAction,
  DEMO,
  dlqPath,
  E2E_USERS,
  loadSession,
  serverActionId,
  signIn,
  signInWith,
} from "./fixtures";
import type { Role } from "@/lib/auth/permissions";

/**
 * Security headers, CSP with nonces (and no violations on the main pages for each role), session
 * cookies, server-side sign-out and idle timeout, sign-in rate limiting, and origin checks on
 * state-changing routes and server actions. Each rate-limit test sends its own X-Forwarded-For so its counters are its
 * own: the e2e server trusts loopback as its reverse proxy (DLQ_TRUSTED_PROXIES in
 * playwright.config.ts), so the test stands where such a proxy would, naming the client's address.
 */
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const tag = randomBytes(4).toString("hex");

// Each test stands alone (its own users, addresses and sign-ins): they may run in both workers at once.
test.describe.configure({ mode: "parallel" });
const octet = () => 1 + Math.floor(Math.random() * 254);
const testIp = () => `10.${octet()}.${octet()}.${octet()}`;

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** Records every CSP violation the page sees (from the DOM event and the console). */
async function watchCsp(page: Page): Promise<string[]> {
  const seen: string[] = [];
  await page.exposeFunction("__reportCspViolation", (v: string) => seen.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __reportCspViolation: (v: string) => void }).__reportCspViolation(
        `${e.effectiveDirective} blocked ${e.blockedURI} on ${location.pathname}`,
      );
    });
  });
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) seen.push(`console: ${m.text()}`);
  });
  return seen;
}

function directives(csp: string): Record<string, string> {
  return Object.fromEntries(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((p) => p[0])
      .map(([k, ...v]) => [k, v.join(" ")]),
  );
}

test("every page carries the security headers and a fresh-nonce CSP without unsafe-inline scripts", async ({
  request,
}) => {
  const a = await request.get("/signin");
  const b = await request.get("/signin");
  expect(a.status()).toBe(200);
  const csp = a.headers()["content-security-policy"];
  expect(csp).toBeTruthy();
  const d = directives(csp);
  const nonce = /'nonce-([^']+)'/.exec(d["script-src"])?.[1];
  expect(nonce).toBeTruthy();
  expect(d["script-src"]).toContain("'strict-dynamic'");
  expect(d["script-src"]).not.toContain("unsafe-inline");
  expect(d["script-src"]).not.toContain("unsafe-eval");
  expect(d["frame-ancestors"]).toBe("'none'");
  expect(d["object-src"]).toBe("'none'");
  expect(d["base-uri"]).toBe("'self'");
  expect(d["form-action"]).toBe("'self'");
  expect(directives(b.headers()["content-security-policy"])["script-src"]).not.toContain(nonce!);
  // Next put the nonce on the scripts it rendered.
  const html = await a.text();
  expect(html).toContain(`nonce="${nonce}"`);
  for (const res of [a, await request.get("/api/health"), await request.get("/favicon.ico")]) {
    const h = res.headers();
    expect(h["x-content-type-options"]).toBe("nosniff");
    expect(h["referrer-policy"]).toBe("no-referrer");
    expect(h["permissions-policy"]).toContain("camera=()");
    expect(h["x-frame-options"]).toBe("DENY");
  }
});

// Operations pages too: the health page draws its charts with uPlot (canvas and its stylesheet).
const OPS = [`${dlqPath(DEMO.rejectedDlq)}/health?range=day`, "/findings", "/owners", "/alerts", "/profile"];
const PAGES: Record<Role, string[]> = {
  viewer: ["/", dlqPath(DEMO.rejectedDlq), `${dlqPath(DEMO.rejectedDlq)}/triage`, "/audit", "/api-reference", ...OPS],
  operator: ["/", dlqPath(DEMO.rejectedDlq), `${dlqPath(DEMO.rejectedDlq)}/triage`, "/audit", ...OPS],
  admin: [
    "/",
    dlqPath(DEMO.rejectedDlq),
    `${dlqPath(DEMO.rejectedDlq)}/triage`,
    "/audit",
    "/admin/users",
    "/admin/triage-rules",
    ...OPS,
    "/alerts/new",
    "/admin/tokens",
  ],
};

for (const role of Object.keys(PAGES) as Role[]) {
  test(`no CSP violations on the main pages for ${role}`, async ({ page }) => {
    const violations = await watchCsp(page);
    // Through the form, not the saved session: the sign-in page and its redirect are checked too.
    await signIn(page, role);
    for (const path of PAGES[role]) {
      await page.goto(path);
      await page.waitForLoadState("networkidle");
    }
    // A letter page, reached by client-side navigation (scripts loaded after the first page).
    await page.goto(dlqPath(DEMO.rejectedDlq));
    await page.getByTestId("letter-row").first().getByRole("link").first().click();
    await expect(page.getByTestId("death-row").first()).toBeVisible();
    await page.waitForLoadState("networkidle");
    expect(violations).toEqual([]);
  });
}

test("the session cookie is httpOnly and SameSite=Lax, and is useless after sign-out", async ({ page, browser }) => {
  await signIn(page, "operator");
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name.endsWith("next-auth.session-token"));
  expect(session, JSON.stringify(cookies.map((c) => c.name))).toBeTruthy();
  expect(session!.httpOnly).toBe(true);
  expect(session!.sameSite).toBe("Lax");
  // Served over http here; on https NEXTAUTH_URL it is Secure and named __Secure-next-auth.session-token.
  expect(session!.secure).toBe(false);

  await page.getByTestId("sign-out").click();
  await expect(page).toHaveURL(/\/signin/);
  // Someone who copied the cookie before sign-out gets nothing with it.
  const thief = await browser.newContext();
  await thief.addCookies([session!]);
  const stolen = await thief.newPage();
  await stolen.goto("/audit");
  await expect(stolen).toHaveURL(/\/signin/);
  const res = await thief.request.post("/api/redrive/plan", {
    headers: { Origin: new URL(page.url()).origin },
    data: {},
  });
  expect(res.status()).toBe(401);
  await thief.close();
});

test("a session idle for longer than the idle timeout is refused and ended on the server", async ({ page }) => {
  // A user of its own, signed in through the form: its newest session is this page's, whatever
  // other tests (in the other worker too) do with the shared viewer's sessions.
  const email = `idle-${tag}@e2e.test`;
  const password = "the-right-password-3";
  await makeUser(email, password);
  await signInWith(page, { email, password });
  const [user] = await sql<{ id: string }>("select id from users where email = $1", [email]);
  // Age this page's session (the newest for the user) past the 30-minute default, as if unused since.
  const aged = await sql<{ id: string }>(
    "update auth_sessions set last_seen_at = now() - interval '31 minutes' where id = (select id from auth_sessions where user_id = $1 order by created_at desc limit 1) returning id",
    [user.id],
  );
  expect(aged).toHaveLength(1);
  await page.goto("/");
  await expect(page).toHaveURL(/\/signin/);
  const rows = await sql<{ end_reason: string }>("select end_reason from auth_sessions where id = $1", [aged[0].id]);
  expect(rows[0].end_reason).toBe("idle");
});

/** A throwaway user with a known password (scrypt hash in the store's format). */
async function makeUser(email: string, password: string, role: Role = "viewer") {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize("NFKC"), salt, 64, { N: 1 << 14, r: 8, p: 1 });
  const hash = ["scrypt", 1 << 14, 8, 1, salt.toString("base64url"), key.toString("base64url")].join("$");
  await sql(
    "insert into users (id, email, role, password_hash, updated_at) values (gen_random_uuid(), $1, $2, $3, now())",
    [email, role, hash],
  );
}

test("five failures for one email lock it for 15 minutes, even with the right password, and it is audited", async ({
  page,
}) => {
  const email = `locked-${tag}@e2e.test`;
  const password = "the-right-password-1";
  await makeUser(email, password);
  await page.setExtraHTTPHeaders({ "X-Forwarded-For": testIp() });
  await page.goto("/signin");
  const attempt = async (pw: string) => {
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(pw);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
  };
  for (let i = 0; i < 5; i++) {
    await attempt(`wrong-${i}`);
    await expect(page.getByTestId("sign-in-error")).toHaveText("Wrong email or password.");
  }
  await attempt(password);
  await expect(page.getByTestId("sign-in-error")).toHaveText(/^Too many attempts; try again in 1[45] minutes\.$/);
  await expect(page).toHaveURL(/\/signin/);

  const audit = await sql<{ outcome: string; details: { scope: string; retryAfterSeconds: number } }>(
    "select outcome, details from audit_log where action = 'auth.sign_in_limited' and actor_email = $1",
    [email],
  );
  expect(audit).toHaveLength(1);
  expect(audit[0].outcome).toBe("denied");
  expect(audit[0].details.scope).toBe("email");
  expect(audit[0].details.retryAfterSeconds).toBeGreaterThan(800);
  // The password was never checked: the attempt is recorded as limited, not as a success.
  const attempts = await sql<{ outcome: string }>("select outcome from sign_in_attempts where email = $1 order by id", [
    email,
  ]);
  expect(attempts.map((a) => a.outcome)).toEqual(["failure", "failure", "failure", "failure", "failure", "limited"]);
});

async function apiSignIn(
  request: APIRequestContext,
  ip: string,
  email: string,
  password: string,
): Promise<string | null> {
  const { csrfToken } = (await (
    await request.get("/api/auth/csrf", { headers: { "X-Forwarded-For": ip } })
  ).json()) as { csrfToken: string };
  const res = await request.post("/api/auth/callback/credentials", {
    headers: { "X-Forwarded-For": ip, Origin: "http://127.0.0.1" },
    form: { email, password, csrfToken, json: "true", callbackUrl: "/" },
    maxRedirects: 0,
  });
  const location = res.headers()["location"] ?? ((await res.json().catch(() => ({}))) as { url?: string }).url ?? "";
  return new URL(location, "http://x").searchParams.get("error");
}

test("twenty failures from one address lock it for every email; a success in between does not reset it", async ({
  playwright,
  baseURL,
}) => {
  const request = await playwright.request.newContext({ baseURL });
  const ip = testIp();
  for (let i = 0; i < 19; i++)
    expect(await apiSignIn(request, ip, `spray-${i}-${tag}@e2e.test`, "guess")).toBe("CredentialsSignin");
  const ok = `ok-${tag}@e2e.test`;
  await makeUser(ok, "the-right-password-2");
  expect(await apiSignIn(request, ip, ok, "the-right-password-2")).toBeNull();
  expect(await apiSignIn(request, ip, `spray-19-${tag}@e2e.test`, "guess")).toBe("CredentialsSignin");
  expect(await apiSignIn(request, ip, `spray-20-${tag}@e2e.test`, "guess")).toMatch(/^RateLimited:\d+$/);
  expect(await apiSignIn(request, ip, ok, "the-right-password-2")).toMatch(/^RateLimited:\d+$/);
  // Another address is unaffected.
  expect(await apiSignIn(request, testIp(), ok, "the-right-password-2")).toBeNull();
  const audit = await sql<{ n: string }>(
    "select count(*) as n from audit_log where action = 'auth.sign_in_limited' and ip = $1 and details->>'scope' = 'ip'",
    [ip],
  );
  expect(Number(audit[0].n)).toBe(2);
  await request.dispose();
});

test("state-changing routes refuse a foreign Origin, and server actions keep Next's origin check", async ({
  page,
  baseURL,
}) => {
  // A session of its own: were the foreign-Origin sign-out below honoured, it would end this one only.
  await signIn(page, "operator");
  const body = { connectionId: DEMO.connectionId, queue: DEMO.rejectedDlq, selection: { kind: "all" } };
  for (const path of ["/api/redrive/plan", "/api/triage/scans"]) {
    const foreign = await page.request.post(path, { headers: { Origin: "https://evil.example" }, data: body });
    expect(foreign.status(), path).toBe(403);
    expect(await foreign.text()).toContain("forbidden:origin");
    const none = await page.request.post(path, { headers: { Origin: "" }, data: body });
    expect(none.status(), `${path} without Origin`).toBe(403);
  }
  // The sign-out endpoint is protected by next-auth's CSRF token.
  const signOut = await page.request.post("/api/auth/signout", {
    headers: { Origin: "https://evil.example" },
    form: { callbackUrl: "/" },
    maxRedirects: 0,
  });
  expect(signOut.status()).toBe(302);
  await page.goto("/");
  await expect(page.getByTestId("sign-out")).toBeVisible();
  expect(baseURL).toBeTruthy();
});

test("server actions refuse a missing, `null` or foreign Origin with 403 before running, audited; the console's own pages still run them", async ({
  page,
  baseURL,
}) => {
  await loadSession(page, "admin");
  const createToken = serverActionId("createTokenAction");
  const tokenName = (what: string) => `origin-${tag}-${what}`;
  const tokensNamed = async (name: string) =>
    Number((await sql<{ n: string }>("select count(*) as n from api_tokens where name = $1", [name]))[0].n);
  const refusedRows = (requestId: string) =>
    sql<{ action: string; outcome: string; actor_email: string; details: Record<string, unknown> }>(
      "select action, outcome, actor_email, details from audit_log where request_id = $1",
      [requestId],
    );

  // The issue's request: the admin's cookie, no Origin, an API token minted. Then the opaque and a foreign Origin.
  for (const [what, origin, reason] of [
    ["none", undefined, "missing"],
    ["empty", "", "missing"],
    ["null", "null", "null"],
    ["foreign", "https://evil.example", "foreign"],
  ] as const) {
    const res = await page.request.post("/profile", {
      headers: {
        "Next-Action": createToken,
        "Content-Type": "text/plain;charset=UTF-8",
        Accept: "text/x-component",
        ...(origin === undefined ? {} : { Origin: origin }),
      },
      data: JSON.stringify([{ name: tokenName(what), role: "admin", expiresInDays: 1 }]),
    });
    expect(res.status(), what).toBe(403);
    expect(await res.json(), what).toMatchObject({ ok: false, error: { code: "forbidden:origin" } });
    expect(await tokensNamed(tokenName(what)), `${what}: no token minted`).toBe(0);
    const requestId = res.headers()["x-request-id"];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const rows = await refusedRows(requestId);
    expect(
      rows.map((r) => [r.action, r.outcome, r.actor_email]),
      what,
    ).toEqual([["auth.origin_refused", "denied", E2E_USERS.admin.email]]);
    expect(rows[0].details).toMatchObject({ reason, path: "/profile", actionId: createToken });
  }

  // A form's action, posted to the page itself without the Next-Action header, from another site.
  const form = await page.request.post("/profile", {
    headers: { Origin: "https://evil.example" },
    multipart: { [`$ACTION_ID_${createToken}`]: "", name: tokenName("form"), role: "admin", expiresInDays: "1" },
  });
  expect(form.status()).toBe(403);
  expect(await tokensNamed(tokenName("form"))).toBe(0);

  // The console's own origin: the same call runs (and its token is revoked again).
  expect(baseURL).toBeTruthy();
  const own = await callServerAction(page.request, "/profile", createToken, [
    { name: tokenName("own"), role: "admin", expiresInDays: 1 },
  ]);
  expect(own.status).toBe(200);
  expect(own.text).toContain('"ok":true');
  expect(await tokensNamed(tokenName("own"))).toBe(1);
  const id = (await sql<{ id: string }>("select id from api_tokens where name = $1", [tokenName("own")]))[0].id;
  const revoked = await callServerAction(page.request, "/profile", serverActionId("revokeMyTokenAction"), [{ id }]);
  expect(revoked.text).toContain('"ok":true');
});

test("API path parameters are decoded once by the real server: a queue named with %25 and %2F is reached by its encoded URL, a double-encoded traversal answers 404", async ({
  page,
}) => {
  const conn = await amqp.connect(process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672");
  const ch = await conn.createConfirmChannel();
  const made: string[] = [];
  /** A DLQ named `name` holding one letter, dead-lettered into it by RabbitMQ from a work queue. */
  const dlqWith = async (name: string, messageId: string) => {
    const work = `e2e.security.${tag}.work.${made.length}`;
    await ch.assertQueue(name, { durable: true });
    await ch.assertQueue(work, {
      durable: true,
      arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": name },
    });
    made.push(name, work);
    ch.sendToQueue(work, Buffer.from("{}"), { messageId });
    await ch.waitForConfirms();
    const m = await ch.get(work, { noAck: false });
    expect(m).toBeTruthy();
    ch.nack(m as amqp.GetMessage, false, false);
    for (let i = 0; i < 100 && (await ch.checkQueue(name)).messageCount < 1; i++)
      await new Promise((r) => setTimeout(r, 50));
  };
  const literal = `e2e.security.${tag}.50%25off%2Fsale.dlq`;
  const target = `e2e.security.${tag}.sec../../api.dlq`;
  try {
    await dlqWith(literal, "literal");
    await dlqWith(decodeURIComponent(literal), "decoy");
    await dlqWith(target, "target");

    await loadSession(page, "viewer");
    const minted = await callServerAction(page.request, "/profile", serverActionId("createTokenAction"), [
      { name: `paths-${tag}`, role: "viewer", expiresInDays: 1 },
    ]);
    const token = /"token":"(dlqc_[^"]+)"/.exec(minted.text)?.[1];
    expect(token, minted.text.slice(0, 300)).toBeTruthy();
    const api = await playwrightRequest.newContext({
      baseURL: `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`,
      extraHTTPHeaders: { Authorization: `Bearer ${token}` },
    });
    try {
      const letters = (segment: string) => api.get(`/api/v1/dlqs/${DEMO.connectionId}/${segment}/letters`);
      const messageIds = async (res: Awaited<ReturnType<typeof letters>>) =>
        ((await res.json()) as { items: Array<{ messageId: string }> }).items.map((l) => l.messageId);

      const own = await letters(encodeURIComponent(literal));
      expect(own.status(), await own.text()).toBe(200);
      expect(await messageIds(own)).toEqual(["literal"]);

      const twice = await letters(encodeURIComponent(encodeURIComponent(target)));
      expect(twice.status(), await twice.text()).toBe(404);
      expect(await twice.text()).not.toContain("target");
      const direct = await letters(encodeURIComponent(target));
      expect(await messageIds(direct)).toEqual(["target"]);
    } finally {
      await api.dispose();
    }
  } finally {
    for (const q of made) await ch.deleteQueue(q).catch(() => undefined);
    await conn.close().catch(() => undefined);
  }
});

test("the CSP report endpoint takes a report, and refuses a body past its cap without holding it", async ({
  request,
}) => {
  const report = {
    "csp-report": {
      "document-uri": "http://127.0.0.1/dlqs",
      "effective-directive": "script-src-elem",
      "blocked-uri": "https://evil.example/x.js?secret=1",
    },
  };
  const ok = await request.post("/api/auth/csp-report", {
    headers: { "Content-Type": "application/csp-report" },
    data: JSON.stringify(report),
  });
  expect(ok.status()).toBe(204);
  const huge = await request.post("/api/auth/csp-report", {
    headers: { "Content-Type": "application/csp-report" },
    data: "x".repeat(8 * 1024 * 1024),
  });
  expect(huge.status()).toBe(413);
  // Sent in chunks with no length up front: the cap holds while reading, too.
  const res = await fetch(
    `${new URL("/api/auth/csp-report", process.env.E2E_BASE_URL ?? `http://127.0.0.1:${process.env.E2E_PORT ?? 3100}`)}`,
    {
      method: "POST",
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 64; i++) c.enqueue(new Uint8Array(64 * 1024));
          c.close();
        },
      }),
      // @ts-expect-error Node's fetch needs this to stream a request body
      duplex: "half",
    },
  );
  expect(res.status).toBe(413);
});
