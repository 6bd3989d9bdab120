import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as health } from "@/app/api/health/route";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { closeAllAdapters } from "@/lib/connections/registry";
import { viewLetter } from "@/lib/dlq/view-letter";
import { loadMaskingConfig, saveMaskingConfig } from "./store";
import type { MaskingRule } from "./types";

/**
 * An admin's glob cannot stall the console: with the header rule `*a*a*a*a*a*a*b` (and a field rule
 * of the same shape) in force, an operator's letter views of a RabbitMQ dead letter whose header
 * and field names are 60 `a`s keep `/api/health`, served from this same process, answering as fast
 * as it did before the views. The backtracking matcher took 7 s per view here, holding every
 * other request of the process for as long.
 */
const HOSTILE = "*a*a*a*a*a*a*b";
const A60 = "a".repeat(60);
const A59B = `${"a".repeat(59)}b`;
const VIEWS = 6;
/** RabbitMQ letter ids: `m-` and the message id in base64url (lib/brokers/rabbitmq/identity.ts). */
const LETTER_ID = `m-${Buffer.from("hostile-glob-1").toString("base64url")}`;

const kit = new RabbitKit();
let operator: Actor;
let dlq = "";
let server: Server;
let healthUrl = "";
let rulesBefore: MaskingRule[] = [];
const meta = (): RequestMeta => ({ requestId: `hostile-glob-${randomUUID()}`, ip: "127.0.0.1" });

const hostileRules: MaskingRule[] = [
  {
    id: "hostile-glob-header",
    description: "",
    enabled: true,
    target: { kind: "header", names: [HOSTILE] },
    action: { kind: "hide" },
    roles: ["viewer", "operator", "admin"],
  },
  {
    id: "hostile-glob-field",
    description: "",
    enabled: true,
    target: { kind: "field", paths: [HOSTILE] },
    action: { kind: "hide" },
    roles: ["viewer", "operator", "admin"],
  },
];

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@hostile-glob.test`,
    role: "operator",
    password: "operator-password-long-enough",
  });
  operator = { id: u.id, email: u.email, name: u.name, role: "operator" };
  const before = await loadMaskingConfig();
  rulesBefore = before.rules;
  await saveMaskingConfig({ rules: [...before.rules, ...hostileRules], sensitive: before.sensitive }, "hostile-glob");
  ({ dlq } = await kit.dlqByReject([
    {
      body: new TextEncoder().encode(JSON.stringify({ [A60]: "plain-field", [A59B]: "secret-field" })),
      messageId: "hostile-glob-1",
      headers: { [A60]: "plain-header", [A59B]: "secret-header" },
    },
  ]));
  server = createServer((_req, res) => {
    const r = health();
    void r.text().then((body) => {
      res.writeHead(r.status, { "content-type": "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  healthUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/api/health`;
});

afterAll(async () => {
  const c = await loadMaskingConfig();
  await saveMaskingConfig({ rules: rulesBefore, sensitive: c.sensitive }, "hostile-glob");
  await new Promise<void>((r) => server?.close(() => r()));
  await kit.cleanup();
  await closeAllAdapters();
});

/** Milliseconds of one health request, answered 200. */
async function healthOnce(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(healthUrl);
  expect(res.status).toBe(200);
  await res.json();
  return performance.now() - t0;
}

/** Health requests one after another until `work` settles: their latencies. */
async function pollDuring(work: Promise<unknown>): Promise<number[]> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  const out: number[] = [];
  while (!done) out.push(await healthOnce());
  await settled;
  return out;
}

describe("a hostile masking glob", () => {
  it("masks what it matches, and /api/health answers during letter views as fast as before them", async () => {
    const view = () =>
      viewLetter(operator, meta(), { connectionId: "local-rabbitmq", queue: dlq, letterId: LETTER_ID });

    // Warm-up: connections, the masking config, compiled code paths.
    const first = await view();
    const shown = JSON.stringify(first.letter);
    expect(shown).toContain("plain-header");
    expect(shown).toContain("plain-field");
    expect(shown).not.toContain("secret-header");
    expect(shown).not.toContain("secret-field");
    for (let i = 0; i < 5; i++) await healthOnce();

    const baseline: number[] = [];
    for (let i = 0; i < 30; i++) baseline.push(await healthOnce());

    const views = (async () => {
      for (let i = 0; i < VIEWS; i += 2) await Promise.all([view(), view()]);
    })();
    const during = await pollDuring(views);

    const worst = (xs: number[]) => Math.max(...xs);
    // Health was asked throughout the views, and never waited much longer than without them.
    expect(during.length).toBeGreaterThan(0);
    const figures = `health: worst ${worst(during).toFixed(0)} ms over ${during.length} requests during ${VIEWS} views, ${worst(baseline).toFixed(0)} ms before`;
    expect(worst(during), figures).toBeLessThan(Math.max(200, 5 * worst(baseline)));
  }, 120_000);
});
