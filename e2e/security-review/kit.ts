import type { APIRequestContext, APIResponse, PlaywrightWorkerArgs } from "@playwright/test";
import { randomBytes, randomUUID, scryptSync } from "node:crypto";
import amqp from "amqplib";
import pg from "pg";
import type { Role } from "@/lib/auth/permissions";
import { authFile, serverActionId } from "../fixtures";

/**
 * What the security review's probes stand on: one request context per caller (a role's saved
 * session, a bearer token, nobody), raw calls with chosen headers, the database for what a probe
 * checks was (or was not) written, and dead letters made by RabbitMQ itself.
 */
export const PORT = Number(process.env.E2E_PORT ?? 3100);
export const BASE = `http://127.0.0.1:${PORT}`;
export const OWN_ORIGIN = BASE;
const DB_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/dlq_console_e2e";
const AMQP_URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";

export async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: DB_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** The answer of one probe: enough to judge it and to say what came back. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  ms: number;
  requestId: string;
}

export async function answerOf(res: APIResponse, started: number, requestId: string): Promise<Answer> {
  return { status: res.status(), headers: res.headers(), text: await res.text(), ms: Date.now() - started, requestId };
}

export type OriginKind = "own" | "none" | "empty" | "null" | "foreign" | "lookalike";

export function originHeader(kind: OriginKind | undefined): Record<string, string> {
  switch (kind) {
    case undefined:
    case "none":
      return {};
    case "own":
      return { Origin: OWN_ORIGIN };
    case "empty":
      return { Origin: "" };
    case "null":
      return { Origin: "null" };
    case "foreign":
      return { Origin: "https://evil.example" };
    case "lookalike":
      // The console's host as a subdomain of another site's: a prefix check would let it through.
      return { Origin: `http://127.0.0.1:${PORT}.evil.example` };
  }
}

/** A request the probe sends: a route (JSON body) or a server action (Next-Action protocol) posted to a page. */
export interface Call {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  origin?: OriginKind;
  headers?: Record<string, string>;
  body?: unknown;
  /** Call this server action (by exported name) on `path`, with these arguments. */
  action?: { name: string; args: unknown[] };
}

export async function send(ctx: APIRequestContext, call: Call): Promise<Answer> {
  const requestId = `review-${randomUUID()}`;
  const headers: Record<string, string> = {
    "x-request-id": requestId,
    ...originHeader(call.origin),
    ...call.headers,
  };
  const started = Date.now();
  if (call.action) {
    const res = await ctx.post(call.path, {
      headers: {
        ...headers,
        "Next-Action": serverActionId(call.action.name),
        "Content-Type": "text/plain;charset=UTF-8",
        Accept: "text/x-component",
      },
      data: JSON.stringify(call.action.args),
      maxRedirects: 0,
    });
    return answerOf(res, started, requestId);
  }
  const method = call.method ?? "GET";
  const res = await ctx.fetch(call.path, {
    method,
    headers,
    data: method === "GET" ? undefined : call.body === undefined ? undefined : JSON.stringify(call.body),
    maxRedirects: 0,
  });
  return answerOf(res, started, requestId);
}

/** The callers: each role's saved session, each role's bearer token (minted here), nobody. */
export type Caller =
  | { kind: "anon" }
  | { kind: "session"; role: Role }
  | { kind: "token"; role: Role }
  | { kind: "context"; name: string };

export const callerName = (c: Caller) =>
  c.kind === "anon" ? "nobody" : c.kind === "context" ? c.name : `${c.role} ${c.kind}`;

export class Callers {
  private readonly contexts = new Map<string, APIRequestContext>();
  readonly tokens: Partial<Record<Role, string>> = {};

  constructor(private readonly playwright: PlaywrightWorkerArgs["playwright"]) {}

  async context(c: Caller): Promise<APIRequestContext> {
    const key = callerName(c);
    const had = this.contexts.get(key);
    if (had) return had;
    let ctx: APIRequestContext;
    if (c.kind === "session") {
      ctx = await this.playwright.request.newContext({ baseURL: BASE, storageState: authFile(c.role) });
    } else if (c.kind === "token") {
      const token = this.tokens[c.role];
      if (!token) throw new Error(`no ${c.role} token minted`);
      ctx = await this.playwright.request.newContext({
        baseURL: BASE,
        extraHTTPHeaders: { Authorization: `Bearer ${token}` },
      });
    } else if (c.kind === "anon") {
      ctx = await this.playwright.request.newContext({ baseURL: BASE });
    } else {
      throw new Error(`context ${c.name} was never set`);
    }
    this.contexts.set(key, ctx);
    return ctx;
  }

  set(name: string, ctx: APIRequestContext) {
    this.contexts.set(name, ctx);
  }

  async newContext(opts: { token?: string; storageState?: string } = {}): Promise<APIRequestContext> {
    return this.playwright.request.newContext({
      baseURL: BASE,
      storageState: opts.storageState,
      extraHTTPHeaders: opts.token ? { Authorization: `Bearer ${opts.token}` } : undefined,
    });
  }

  /** Mints a token through the profile page's server action, as its owner would; returns its secret. */
  async mint(session: APIRequestContext, name: string, role: Role): Promise<string> {
    const a = await send(session, {
      path: "/profile",
      origin: "own",
      action: { name: "createTokenAction", args: [{ name, role, expiresInDays: 1 }] },
    });
    const token = /"token":"(dlqc_[^"]+)"/.exec(a.text)?.[1];
    if (!token) throw new Error(`could not mint a ${role} token: ${a.status} ${a.text.slice(0, 300)}`);
    return token;
  }

  async dispose() {
    for (const ctx of this.contexts.values()) await ctx.dispose().catch(() => undefined);
  }
}

/** A user of the review's own, with a known password (scrypt hash in the store's format). */
export async function makeUser(email: string, password: string, role: Role): Promise<string> {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize("NFKC"), salt, 64, { N: 1 << 14, r: 8, p: 1 });
  const hash = ["scrypt", 1 << 14, 8, 1, salt.toString("base64url"), key.toString("base64url")].join("$");
  const [row] = await sql<{ id: string }>(
    "insert into users (id, email, role, password_hash, updated_at) values (gen_random_uuid(), $1, $2, $3, now()) returning id",
    [email, role, hash],
  );
  return row.id;
}

/** Signs a user in over HTTP (the credentials form's post) from its own address; the context keeps the cookie. */
export async function signInOverHttp(ctx: APIRequestContext, email: string, password: string, ip: string) {
  const { csrfToken } = (await (await ctx.get("/api/auth/csrf", { headers: { "X-Forwarded-For": ip } })).json()) as {
    csrfToken: string;
  };
  const res = await ctx.post("/api/auth/callback/credentials", {
    headers: { "X-Forwarded-For": ip, Origin: OWN_ORIGIN },
    form: { email, password, csrfToken, json: "true", callbackUrl: "/" },
    maxRedirects: 0,
  });
  const location = res.headers().location ?? "";
  const error = new URL(location || "/", BASE).searchParams.get("error");
  if (error) throw new Error(`sign-in of ${email} failed: ${error}`);
}

/** The RabbitMQ adapter's letter id for a message id (lib/brokers/rabbitmq/identity.ts). */
export const letterIdFor = (messageId: string) => `m-${Buffer.from(messageId, "utf8").toString("base64url")}`;

export interface Letter {
  messageId: string;
  body: string;
  headers: Record<string, string>;
}

/** Queues made by RabbitMQ's own dead-lettering (nack, requeue=false) from a work queue; removed at the end. */
export class DeadLetters {
  private conn?: amqp.ChannelModel;
  private readonly made: string[] = [];

  async dlq(name: string, letters: Letter[]) {
    this.conn ??= await amqp.connect(AMQP_URL);
    const ch = await this.conn.createConfirmChannel();
    const work = `${name}.work`;
    await ch.assertQueue(name, { durable: true });
    await ch.assertQueue(work, {
      durable: true,
      arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": name },
    });
    this.made.push(name, work);
    for (const l of letters) {
      ch.sendToQueue(work, Buffer.from(l.body), {
        persistent: true,
        messageId: l.messageId,
        contentType: "application/json",
        headers: l.headers,
      });
    }
    await ch.waitForConfirms();
    for (let i = 0; i < letters.length; i++) {
      const m = await ch.get(work, { noAck: false });
      if (!m) throw new Error(`letter ${i} of ${work} not there`);
      ch.nack(m, false, false);
    }
    for (let i = 0; i < 200 && (await ch.checkQueue(name)).messageCount < letters.length; i++)
      await new Promise((r) => setTimeout(r, 25));
    await ch.close();
  }

  async cleanup() {
    if (!this.conn) return;
    const ch = await this.conn.createChannel();
    for (const q of this.made) await ch.deleteQueue(q).catch(() => undefined);
    await this.conn.close().catch(() => undefined);
  }
}

/** Starts a scan (operator session) and waits for it to end; returns how long it took. */
export async function scan(ctx: APIRequestContext, connectionId: string, queue: string): Promise<number> {
  const started = Date.now();
  const res = await ctx.post("/api/triage/scans", {
    headers: { Origin: OWN_ORIGIN, "Content-Type": "application/json" },
    data: JSON.stringify({ connectionId, queue }),
  });
  const body = (await res.json()) as { ok: boolean; data?: { scan: { id: string } } };
  if (!body.ok || !body.data) throw new Error(`scan of ${queue} not started: ${res.status()} ${JSON.stringify(body)}`);
  const id = body.data.scan.id;
  for (let i = 0; i < 600; i++) {
    const s = (await (await ctx.get(`/api/triage/scans/${id}`)).json()) as { data?: { state?: string } };
    const state = s.data?.state;
    if (state === "succeeded") return Date.now() - started;
    if (state === "failed" || state === "cancelled") throw new Error(`scan of ${queue} ${state}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`scan of ${queue} did not end`);
}

/** Times GET /api/health while `work` runs (one after another, as a client waiting on the server would). */
export async function healthDuring<T>(
  ctx: APIRequestContext,
  work: Promise<T>,
): Promise<{ result: T; worstMs: number; samples: number }> {
  let done = false;
  let worstMs = 0;
  let samples = 0;
  const watcher = (async () => {
    while (!done) {
      const t = Date.now();
      const res = await ctx.get("/api/health");
      if (res.status() !== 200) throw new Error(`/api/health answered ${res.status()}`);
      worstMs = Math.max(worstMs, Date.now() - t);
      samples++;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work, worstMs, samples };
  } finally {
    done = true;
    await watcher;
  }
}
