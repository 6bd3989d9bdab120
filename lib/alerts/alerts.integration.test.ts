import { randomUUID } from "node:crypto";
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { encode } from "next-auth/jwt";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { sessionCookieName } from "@/lib/auth/config";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { createSession } from "@/lib/auth/sessions";
import { createUser } from "@/lib/auth/users";
import { resetConfigCache } from "@/lib/config";
import { getDb } from "@/lib/db";
import { isAppError } from "@/lib/errors";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { deliverAlerts, pruneAlerts } from "./deliver";
import { evaluateAlerts } from "./evaluate";
import type { SlackMessage } from "./message";
import { claimDue, fireState, resolveState } from "./store";
import {
  createAlertRule,
  deleteAlertRule,
  listAlertRules,
  sendTestAlert,
  updateAlertRule,
  viewAlertRule,
} from "./use-cases";
import { inRequestScope } from "@/test/request-scope";

/**
 * Alerts end to end on the real Postgres: rules saved through the use cases, DLQ figures written
 * as the sampler writes them (dlq_status, dlq_samples, dlq_findings), evaluation rounds, delivery
 * rounds posting to a real HTTP receiver on 127.0.0.1 (allowed by the test config's
 * operations.webhookAllowedHosts), and two evaluators / two delivery rounds racing on separate
 * database connections, as two replicas would.
 */
(globalThis as { AsyncLocalStorage?: unknown }).AsyncLocalStorage ??= AsyncLocalStorage;
process.env.NEXTAUTH_SECRET ||= "alerts-test-secret-0123456789abcdef0123456789";
const ORIGIN = "http://127.0.0.1:3998";
process.env.NEXTAUTH_URL = ORIGIN;

const RUN = `it-${randomUUID().slice(0, 8)}`;
const CONN = "alerts-it";
const dir = mkdtempSync(path.join(tmpdir(), "dlq-alerts-"));
const configFile = path.join(dir, "config.json");

function writeConfig(allowedHosts: string[]) {
  writeFileSync(
    configFile,
    JSON.stringify({
      connections: [{ kind: "rabbitmq", id: CONN, url: "amqp://127.0.0.1:5672", discover: false }],
      owners: [{ connection: CONN, queue: `${RUN}.owned.*`, team: "payments", contact: "#payments-oncall" }],
      operations: { webhookAllowedHosts: allowedHosts },
    }),
  );
  process.env.DLQ_CONSOLE_CONFIG = configFile;
  resetConfigCache();
}

// ---- a webhook receiver: answers with the next scripted status (200 when none is left)
interface Received {
  path: string;
  body: SlackMessage;
}
const received: Received[] = [];
let script: number[] = [];
const receiver = http.createServer((req, res) => {
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    received.push({ path: req.url ?? "", body: JSON.parse(raw) as SlackMessage });
    const status = script.shift() ?? 200;
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(status === 200 ? "ok" : "receiver is down");
  });
});
let port = 0;
const hook = (name: string) => `http://127.0.0.1:${port}/hook/${name}/SECRET-TOKEN-${RUN}`;
const gotFor = (name: string) => received.filter((r) => r.path.startsWith(`/hook/${name}/`));

let admin: Actor;
let viewer: Actor;
let viewerCookie = "";
const meta = (): RequestMeta => ({ requestId: `alerts-${randomUUID()}`, ip: "127.0.0.1" });
const replicas: PrismaClient[] = [];

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  port = (receiver.address() as AddressInfo).port;
  writeConfig(["127.0.0.1"]);
  const a = await createUser({
    email: `admin-${RUN}@alerts.test`,
    role: "admin",
    password: "admin-password-long-enough",
  });
  const v = await createUser({
    email: `viewer-${RUN}@alerts.test`,
    role: "viewer",
    password: "viewer-password-long-enough",
  });
  admin = { id: a.id, email: a.email, name: null, role: "admin" };
  viewer = { id: v.id, email: v.email, name: null, role: "viewer" };
  const sid = await createSession({ userId: v.id, method: "credentials", ip: "127.0.0.1" });
  viewerCookie = `${sessionCookieName()}=${await encode({ token: { sub: v.id, sid, email: v.email }, secret: process.env.NEXTAUTH_SECRET! })}`;
  for (let i = 0; i < 2; i++)
    replicas.push(new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL! }) }));
});

afterAll(async () => {
  await getDb().alertRule.deleteMany({ where: { name: { startsWith: RUN } } });
  await getDb().dlqStatus.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
  await getDb().dlqSample.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
  await getDb().dlqFinding.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
  await Promise.all(replicas.map((r) => r.$disconnect()));
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  rmSync(dir, { recursive: true, force: true });
  delete process.env.DLQ_CONSOLE_CONFIG;
  resetConfigCache();
});

beforeEach(() => {
  script = [];
  writeConfig(["127.0.0.1"]);
});

// Each test's rules and DLQ figures go when it ends, so later evaluations see only their own.
afterEach(async () => {
  await getDb().alertRule.deleteMany({ where: { name: { startsWith: RUN } } });
  await getDb().dlqStatus.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
  await getDb().dlqSample.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
  await getDb().dlqFinding.deleteMany({ where: { connectionId: CONN, queue: { startsWith: RUN } } });
});

async function status(
  queue: string,
  v: {
    depth?: number | null;
    oldestAt?: Date | null;
    deadlineAt?: Date | null;
    missingSince?: Date | null;
    error?: string | null;
  } = {},
) {
  const data = {
    queueType: "classic",
    sampledAt: new Date(),
    depth: v.depth === undefined ? 0 : v.depth,
    oldestAt: v.oldestAt ?? null,
    oldestSource: "broker",
    deadlineAt: v.deadlineAt ?? null,
    missingSince: v.missingSince ?? null,
    error: v.error ?? null,
  };
  await getDb().dlqStatus.upsert({
    where: { connectionId_queue: { connectionId: CONN, queue } },
    create: { connectionId: CONN, queue, ...data },
    update: data,
  });
}

async function rule(
  name: string,
  kind: string,
  params: Record<string, unknown>,
  scope: { queuePattern?: string; ownerTeam?: string } = {},
) {
  return createAlertRule(admin, meta(), {
    name: `${RUN} ${name}`,
    kind: kind as never,
    params,
    connectionId: CONN,
    queuePattern: scope.queuePattern ?? null,
    ownerTeam: scope.ownerTeam ?? null,
    webhookUrl: hook(name),
  });
}

async function round(opts: { now?: Date } = {}) {
  const e = await evaluateAlerts(opts);
  const d = await deliverAlerts();
  return { e, d };
}

const deliveriesOf = (ruleId: string) => getDb().alertDelivery.findMany({ where: { ruleId }, orderBy: { id: "asc" } });

describe("a rule's life", () => {
  it("fires once, stays quiet while the condition holds, resolves once", async () => {
    const queue = `${RUN}.owned.orders.dlq`;
    const r = await rule(
      "depth",
      "depth_above",
      { depth: 10 },
      { queuePattern: `${RUN}.owned.*`, ownerTeam: "payments" },
    );
    await status(queue, { depth: 50 });

    await round();
    expect(gotFor("depth")).toHaveLength(1);
    const fire = gotFor("depth")[0].body;
    expect(fire.text).toContain(`:rotating_light: Firing: ${queue} on ${CONN}: depth above 10`);
    expect(fire.text).toContain("Seen: depth 50");
    expect(fire.text).toContain("Owner: payments (#payments-oncall)");
    expect(fire.text).toContain(`<${ORIGIN}/dlqs/${CONN}/${encodeURIComponent(queue)}|Open the DLQ in DLQ Console>`);

    // The condition holds over several rounds (and the depth changes): nothing more is sent.
    for (const depth of [60, 70, 11, 80]) {
      await status(queue, { depth });
      const { e } = await round();
      expect(e.fired).toBe(0);
    }
    expect(gotFor("depth")).toHaveLength(1);

    await status(queue, { depth: 2 });
    const { e } = await round();
    expect(e.resolved).toBe(1);
    for (let i = 0; i < 3; i++) await round();
    const got = gotFor("depth");
    expect(got).toHaveLength(2);
    expect(got[1].body.text).toContain(`:white_check_mark: Resolved: ${queue} on ${CONN}: depth above 10`);
    expect(got[1].body.text).toContain("Now: depth 2");

    const log = await deliveriesOf(r.id);
    expect(log.map((d) => [d.event, d.state, d.attempts, d.statusCode])).toEqual([
      ["fire", "delivered", 1, 200],
      ["resolve", "delivered", 1, 200],
    ]);
    const state = await getDb().alertState.findUnique({
      where: { ruleId_connectionId_queue: { ruleId: r.id, connectionId: CONN, queue } },
    });
    expect(state).toMatchObject({ state: "resolved", value: "depth 2" });

    // Firing again after resolving is a new message.
    await status(queue, { depth: 99 });
    await round();
    expect(gotFor("depth").map((g) => g.body.text.split(":")[1])).toEqual([
      "rotating_light",
      "white_check_mark",
      "rotating_light",
    ]);
  });

  it("applies only to the DLQs of its scope: another team's DLQ does not fire", async () => {
    await rule("team", "depth_above", { depth: 0 }, { ownerTeam: "payments" });
    await status(`${RUN}.unowned.dlq`, { depth: 500 });
    await status(`${RUN}.owned.team.dlq`, { depth: 1 });
    await round();
    expect(gotFor("team").map((g) => g.body.blocks[1])).toEqual([
      { type: "section", fields: expect.arrayContaining([{ type: "mrkdwn", text: `*DLQ*\n${RUN}.owned.team.dlq` }]) },
    ]);
  });

  it("resolves when the DLQ disappears, and holds while the broker cannot be read", async () => {
    const queue = `${RUN}.gone.dlq`;
    const r = await rule("gone", "oldest_above", { minutes: 30 }, { queuePattern: queue });
    await status(queue, { depth: 3, oldestAt: new Date(Date.now() - 90 * 60_000) });
    await round();
    expect(gotFor("gone")).toHaveLength(1);
    expect(gotFor("gone")[0].body.text).toContain("Seen: oldest letter 1 h 30 min old");

    await status(queue, { depth: null, error: "The broker did not answer" });
    expect((await round()).e).toMatchObject({ fired: 0, resolved: 0 });

    await status(queue, { depth: 3, oldestAt: new Date(Date.now() - 90 * 60_000), missingSince: new Date() });
    expect((await round()).e.resolved).toBe(1);
    expect(gotFor("gone")[1].body.text).toContain("Now: the DLQ is gone from its broker");
    expect((await deliveriesOf(r.id)).map((d) => d.event)).toEqual(["fire", "resolve"]);
  });

  it("fires on inflow within the window (60 s samples) and resolves once the window has passed", async () => {
    const queue = `${RUN}.inflow.dlq`;
    await rule("inflow", "inflow_within", { minutes: 10 }, { queuePattern: queue });
    await status(queue, { depth: 4 });
    const bucketAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 3 * 60_000);
    await getDb().dlqSample.create({
      data: { connectionId: CONN, queue, resolution: 60, bucketAt, depth: 4, depthMax: 4, inflow: 4 },
    });
    // A bucket of a coarser resolution is not read twice.
    await getDb().dlqSample.create({
      data: {
        connectionId: CONN,
        queue,
        resolution: 900,
        bucketAt: new Date(Math.floor(bucketAt.getTime() / 900_000) * 900_000),
        inflow: 4,
      },
    });
    await round();
    expect(gotFor("inflow").map((g) => g.body.text.split("\n")[1])).toEqual([
      "Seen: 4 letters entered in the last 10 min",
    ]);
    await round({ now: new Date(Date.now() + 5 * 60_000) });
    expect(gotFor("inflow")).toHaveLength(1);
    await round({ now: new Date(Date.now() + 15 * 60_000) });
    expect(gotFor("inflow").map((g) => g.body.text.split("\n")[1])).toEqual([
      "Seen: 4 letters entered in the last 10 min",
      "Now: 0 letters entered in the last 10 min",
    ]);
  });

  it("fires for an open finding at or above the severity, and resolves when it is fixed", async () => {
    const queue = `${RUN}.finding.dlq`;
    await rule("finding", "finding_at_least", { severity: "warning" }, { queuePattern: queue });
    const now = new Date();
    const f = await getDb().dlqFinding.create({
      data: {
        connectionId: CONN,
        queue,
        code: "rabbitmq.dlq_ttl",
        severity: "warning",
        object: `queue ${queue}`,
        why: "<b>its own TTL</b>",
        fix: "remove it",
        firstSeenAt: now,
        lastSeenAt: now,
      },
    });
    await round();
    expect(gotFor("finding")).toHaveLength(1);
    expect(gotFor("finding")[0].body.text).toContain(`Seen: warning finding rabbitmq.dlq_ttl on queue ${queue}`);
    await round();
    await getDb().dlqFinding.update({ where: { id: f.id }, data: { resolvedAt: new Date() } });
    await round();
    expect(gotFor("finding")).toHaveLength(2);
  });

  it("a deleted rule sends nothing more, and a disabled one forgets its states silently", async () => {
    const queue = `${RUN}.disable.dlq`;
    const r = await rule("disable", "depth_above", { depth: 0 }, { queuePattern: queue });
    await status(queue, { depth: 5 });
    await round();
    expect(gotFor("disable")).toHaveLength(1);
    await updateAlertRule(admin, meta(), {
      id: r.id,
      name: r.name,
      kind: "depth_above",
      params: { depth: 0 },
      connectionId: CONN,
      queuePattern: queue,
      ownerTeam: null,
      enabled: false,
    });
    expect(await getDb().alertState.count({ where: { ruleId: r.id } })).toBe(0);
    await round();
    // Enabled again: it starts over, so the DLQ above the threshold fires anew.
    await updateAlertRule(admin, meta(), {
      id: r.id,
      name: r.name,
      kind: "depth_above",
      params: { depth: 0 },
      connectionId: CONN,
      queuePattern: queue,
      ownerTeam: null,
      enabled: true,
    });
    await round();
    expect(gotFor("disable").map((g) => g.body.text.slice(0, 16))).toEqual([":rotating_light:", ":rotating_light:"]);
    await deleteAlertRule(admin, meta(), { id: r.id });
    await status(queue, { depth: 0 });
    await round();
    expect(gotFor("disable")).toHaveLength(2);
    expect(await getDb().alertDelivery.count({ where: { ruleId: r.id } })).toBe(0);
  });
});

describe("replicas racing", () => {
  it("two evaluators racing on separate connections produce one message", async () => {
    const queue = `${RUN}.race.dlq`;
    const r = await rule("race", "depth_above", { depth: 1 }, { queuePattern: queue });
    await status(queue, { depth: 10 });
    const results = await Promise.all([...replicas, getDb(), ...replicas].map((db) => evaluateAlerts({ db })));
    expect(results.reduce((n, x) => n + x.fired, 0)).toBe(1);
    expect((await deliveriesOf(r.id)).map((d) => d.event)).toEqual(["fire"]);

    // The transition statements themselves, many at once: one wins each way.
    const key = { ruleId: r.id, connectionId: CONN, queue };
    const resolves = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        resolveState(replicas[i % 2], key, new Date(), "depth 0", { text: "resolved by the race", blocks: [] }),
      ),
    );
    expect(resolves.filter(Boolean)).toHaveLength(1);
    const fires = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fireState(replicas[i % 2], key, new Date(), "depth 9", { text: "fired again by the race", blocks: [] }),
      ),
    );
    expect(fires.filter(Boolean)).toHaveLength(1);
    expect((await deliveriesOf(r.id)).map((d) => d.event)).toEqual(["fire", "resolve", "fire"]);

    // Two delivery rounds racing, round after round: each message is sent once (one attempt per
    // delivery row, one message at the receiver), in order (a message waits while an older one of
    // the same rule and DLQ is pending). On a loaded machine one replica's round may start after the
    // other's ended, so a round may send two messages, one after the other: counted per message.
    for (let i = 0; i < 5; i++) await Promise.all(replicas.map((db) => deliverAlerts({ db })));
    expect((await deliveriesOf(r.id)).map((d) => [d.event, d.attempts, d.state])).toEqual([
      ["fire", 1, "delivered"],
      ["resolve", 1, "delivered"],
      ["fire", 1, "delivered"],
    ]);
    expect(gotFor("race").map((g) => g.body.text)).toEqual([
      expect.stringContaining("Firing"),
      "resolved by the race",
      "fired again by the race",
    ]);
  });

  it("a row one replica has claimed is skipped by another (not waited for, not sent twice), and retried after the claim's lease if its sender died", async () => {
    const queue = `${RUN}.claim.dlq`;
    const r = await rule("claim", "depth_above", { depth: 0 }, { queuePattern: queue });
    await status(queue, { depth: 1 });
    await evaluateAlerts();
    await replicas[0].$transaction(
      async (tx) => {
        expect(await claimDue(tx, 10, 60_000)).toHaveLength(1);
        // The row is locked by this open transaction: the other replica must skip it at once.
        const other = await Promise.race([
          claimDue(replicas[1], 10, 60_000),
          new Promise((r) => setTimeout(() => r("waited for the lock"), 3_000)),
        ]);
        expect(other).toEqual([]);
      },
      { timeout: 10_000 },
    );
    // Committed: the claim's lease keeps it from every round until it runs out...
    expect(await claimDue(replicas[1], 10, 60_000)).toEqual([]);
    expect(await deliverAlerts()).toMatchObject({ attempted: 0 });
    // ...then (its sender never recorded an outcome) it is tried again, counted as a second attempt.
    await getDb().alertDelivery.updateMany({
      where: { ruleId: r.id },
      data: { nextAttemptAt: new Date(Date.now() - 1000) },
    });
    expect(await deliverAlerts()).toMatchObject({ attempted: 1, delivered: 1 });
    expect((await deliveriesOf(r.id)).map((d) => [d.state, d.attempts])).toEqual([["delivered", 2]]);
    expect(gotFor("claim")).toHaveLength(1);
  });
});

describe("delivery", () => {
  it("retries a failing receiver with backoff, shows the failure in the log, then delivers", async () => {
    const queue = `${RUN}.retry.dlq`;
    const r = await rule("retry", "depth_above", { depth: 0 }, { queuePattern: queue });
    await status(queue, { depth: 1 });
    script = [500, 500];

    await evaluateAlerts();
    const t1 = Date.now();
    expect(await deliverAlerts()).toMatchObject({ attempted: 1, retrying: 1 });
    let [row] = await deliveriesOf(r.id);
    expect(row).toMatchObject({
      state: "pending",
      attempts: 1,
      statusCode: 500,
      lastErrorClass: "HTTP 5xx",
      lastError: `127.0.0.1:${port} answered HTTP 500: receiver is down`,
    });
    expect(row.nextAttemptAt.getTime() - t1).toBeGreaterThan(25_000);
    expect(row.nextAttemptAt.getTime() - t1).toBeLessThan(35_000);

    // Not due yet: the next round leaves it alone.
    expect(await deliverAlerts()).toMatchObject({ attempted: 0 });

    // The delivery log, as a viewer reads it: the failure's class, not the receiver's words.
    const seen = await viewAlertRule(viewer, meta(), { id: r.id });
    expect(seen.deliveries).toEqual([
      expect.objectContaining({
        event: "fire",
        state: "pending",
        attempts: 1,
        statusCode: 500,
        errorClass: "HTTP 5xx",
        errorDetail: null,
      }),
    ]);
    expect(JSON.stringify(seen)).not.toContain("receiver is down");
    expect((await viewAlertRule(admin, meta(), { id: r.id })).deliveries[0]).toMatchObject({
      errorClass: "HTTP 5xx",
      errorDetail: `127.0.0.1:${port} answered HTTP 500: receiver is down`,
    });
    expect(seen.rule.webhookOrigin).toBe(`http://127.0.0.1:${port}`);
    expect(JSON.stringify(seen)).not.toContain("SECRET-TOKEN");

    // Time passes (the row comes due); the second attempt fails too and waits longer.
    await getDb().alertDelivery.update({ where: { id: row.id }, data: { nextAttemptAt: new Date(Date.now() - 1000) } });
    const t2 = Date.now();
    expect(await deliverAlerts()).toMatchObject({ attempted: 1, retrying: 1 });
    [row] = await deliveriesOf(r.id);
    expect(row.attempts).toBe(2);
    expect(row.nextAttemptAt.getTime() - t2).toBeGreaterThan(115_000);
    expect(row.nextAttemptAt.getTime() - t2).toBeLessThan(125_000);

    await getDb().alertDelivery.update({ where: { id: row.id }, data: { nextAttemptAt: new Date(Date.now() - 1000) } });
    expect(await deliverAlerts()).toMatchObject({ attempted: 1, delivered: 1 });
    [row] = await deliveriesOf(r.id);
    expect(row).toMatchObject({
      state: "delivered",
      attempts: 3,
      statusCode: 200,
      lastErrorClass: "HTTP 5xx",
      lastError: `127.0.0.1:${port} answered HTTP 500: receiver is down`,
    });
    expect(row.deliveredAt).not.toBeNull();
    expect(gotFor("retry")).toHaveLength(3);
    expect(new Set(gotFor("retry").map((g) => JSON.stringify(g.body))).size).toBe(1);

    const list = await listAlertRules(viewer, meta());
    expect(list.find((x) => x.id === r.id)).toMatchObject({
      firing: 1,
      lastDelivery: { state: "delivered", attempts: 3 },
    });
  });

  it("gives up after the last attempt (state failed)", async () => {
    const queue = `${RUN}.giveup.dlq`;
    const r = await rule("giveup", "depth_above", { depth: 0 }, { queuePattern: queue });
    await status(queue, { depth: 1 });
    script = Array(10).fill(503);
    await evaluateAlerts();
    for (let i = 0; i < 6; i++) {
      await getDb().alertDelivery.updateMany({
        where: { ruleId: r.id },
        data: { nextAttemptAt: new Date(Date.now() - 1000) },
      });
      await deliverAlerts();
    }
    const [row] = await deliveriesOf(r.id);
    expect(row).toMatchObject({ state: "failed", attempts: 6, statusCode: 503, lastErrorClass: "HTTP 5xx" });
    expect(row.lastError).toMatch(/answered HTTP 503: receiver is down \(gave up after 6 attempts\)$/);
    await getDb().alertDelivery.updateMany({
      where: { ruleId: r.id },
      data: { nextAttemptAt: new Date(Date.now() - 1000) },
    });
    expect(await deliverAlerts()).toMatchObject({ attempted: 0 });
    expect(gotFor("giveup")).toHaveLength(6);
  });

  it("sends a test message on demand (admins), logged and audited", async () => {
    const r = await rule("test", "depth_above", { depth: 5 });
    const m = meta();
    expect(await sendTestAlert(admin, m, { id: r.id })).toEqual({ delivered: true, statusCode: 200, error: null });
    expect(gotFor("test")[0].body.text).toContain(`Test message from DLQ Console for rule "${RUN} test"`);
    script = [500];
    expect(await sendTestAlert(admin, meta(), { id: r.id })).toEqual({
      delivered: false,
      statusCode: 500,
      error: `HTTP 5xx — 127.0.0.1:${port} answered HTTP 500: receiver is down`,
    });
    expect((await deliveriesOf(r.id)).map((d) => [d.event, d.state])).toEqual([
      ["test", "delivered"],
      ["test", "failed"],
    ]);
    const { rows } = await queryAudit({ action: "alert.test_send" }, { limit: 20 });
    const row = rows.find((x) => x.requestId === m.requestId);
    expect(row?.outcome).toBe("success");
    expect(JSON.stringify(row)).not.toContain("SECRET-TOKEN");
    expect(row?.details).toMatchObject({ webhook: `http://127.0.0.1:${port}`, delivered: true, statusCode: 200 });
  });
});

describe("housekeeping", () => {
  it("prunes old delivered or failed messages and resolved states, never pending ones or firing states", async () => {
    const r = await rule("prune", "depth_above", { depth: 0 });
    const old = new Date(Date.now() - 40 * 24 * 3600_000);
    const base = { ruleId: r.id, connectionId: CONN, event: "fire", payload: { text: "x" } };
    await getDb().alertDelivery.createMany({
      data: [
        { ...base, queue: `${RUN}.a`, state: "delivered", createdAt: old },
        { ...base, queue: `${RUN}.b`, state: "failed", createdAt: old },
        {
          ...base,
          queue: `${RUN}.c`,
          state: "pending",
          createdAt: old,
          nextAttemptAt: new Date(Date.now() + 3600_000),
        },
        { ...base, queue: `${RUN}.d`, state: "delivered" },
      ],
    });
    await getDb().alertState.createMany({
      data: [
        { ruleId: r.id, connectionId: CONN, queue: `${RUN}.a`, state: "resolved", since: old, updatedAt: old },
        { ruleId: r.id, connectionId: CONN, queue: `${RUN}.b`, state: "firing", since: old, updatedAt: old },
        {
          ruleId: r.id,
          connectionId: CONN,
          queue: `${RUN}.c`,
          state: "resolved",
          since: new Date(),
          updatedAt: new Date(),
        },
      ],
    });
    await pruneAlerts({ days: 30 });
    expect(
      (await getDb().alertDelivery.findMany({ where: { ruleId: r.id }, orderBy: { queue: "asc" } })).map(
        (d) => d.queue,
      ),
    ).toEqual([`${RUN}.c`, `${RUN}.d`]);
    expect(
      (await getDb().alertState.findMany({ where: { ruleId: r.id }, orderBy: { queue: "asc" } })).map((s) => s.queue),
    ).toEqual([`${RUN}.b`, `${RUN}.c`]);
  });
});

describe("webhook targets", () => {
  async function refusedAtSave(url: string): Promise<string> {
    try {
      await createAlertRule(admin, meta(), {
        name: `${RUN} refused`,
        kind: "depth_above",
        params: { depth: 1 },
        webhookUrl: url,
      });
    } catch (e) {
      if (isAppError(e) && e.code === "bad_request:webhook") return e.userMessage;
      throw e;
    }
    throw new Error(`${url} was saved`);
  }

  it("refuses at save a target on loopback or a metadata address without an allow-list entry, with a clear message", async () => {
    writeConfig([]);
    expect(await refusedAtSave(`http://127.0.0.1:${port}/hook`)).toBe(
      "The webhook URL must use https. Plain http is only allowed to hosts an admin lists in operations.webhookAllowedHosts, and 127.0.0.1:" +
        port +
        " is not listed.",
    );
    expect(await refusedAtSave(`https://127.0.0.1:${port}/hook`)).toBe(
      `127.0.0.1:${port} is a loopback address. Webhooks go to public hosts unless an admin lists the host in operations.webhookAllowedHosts.`,
    );
    // A name (resolved by the system resolver) that lands on loopback.
    expect(await refusedAtSave(`https://localhost:${port}/hook`)).toMatch(
      new RegExp(`^localhost:${port} \\((127\\.0\\.0\\.1|::1)\\) is a loopback address\\.`),
    );
    expect(await refusedAtSave("https://169.254.169.254/latest/meta-data/")).toBe(
      "169.254.169.254 is a cloud metadata address, never a webhook target.",
    );
    expect(await getDb().alertRule.count({ where: { name: `${RUN} refused` } })).toBe(0);

    // Allow-listed hosts open loopback, never the metadata address or the console's own database.
    writeConfig(["127.0.0.1", "169.254.169.254"]);
    expect(await refusedAtSave("http://169.254.169.254/latest/meta-data/")).toBe(
      "169.254.169.254 is a cloud metadata address, never a webhook target.",
    );
    const dbPort = new URL(process.env.DATABASE_URL!).port || "5432";
    expect(await refusedAtSave(`http://127.0.0.1:${dbPort}/`)).toBe(
      `127.0.0.1:${dbPort} is the console's own database, never a webhook target.`,
    );
    expect(await refusedAtSave(`http://user:pw@127.0.0.1:${port}/`)).toMatch(/must not hold a user name or password/);

    // The refused attempt is on record, as a failure with its code.
    const { rows } = await queryAudit({ actor: admin.email, action: "alert.rule_create" }, { limit: 50 });
    expect(
      rows.some(
        (r) => r.outcome === "failure" && (r.details as { error?: string } | null)?.error === "bad_request:webhook",
      ),
    ).toBe(true);
  });

  it("checks the target again before each send: a host taken off the allow-list is not posted to", async () => {
    const queue = `${RUN}.recheck.dlq`;
    const r = await rule("recheck", "depth_above", { depth: 0 }, { queuePattern: queue });
    await status(queue, { depth: 1 });
    await evaluateAlerts();
    writeConfig([]);
    expect(await deliverAlerts()).toMatchObject({ attempted: 1, failed: 1 });
    const [row] = await deliveriesOf(r.id);
    expect(row.state).toBe("failed");
    expect(row.lastErrorClass).toBe("refused by the webhook policy");
    expect(row.lastError).toMatch(/^Not sent: The webhook URL must use https/);
    expect(gotFor("recheck")).toHaveLength(0);
  });
});

describe("who may", () => {
  it("records a rule's change in the audit log with its name and scope, the webhook only as its origin", async () => {
    const m = meta();
    const r = await createAlertRule(admin, m, {
      name: `${RUN} audited`,
      kind: "deadline_within",
      params: { minutes: 90 },
      connectionId: CONN,
      queuePattern: "orders.*",
      ownerTeam: "payments",
      webhookUrl: hook("audited"),
    });
    const { rows } = await queryAudit({ action: "alert.rule_create" }, { limit: 50 });
    const row = rows.find((x) => x.requestId === m.requestId)!;
    expect(row.outcome).toBe("success");
    expect(row.details).toMatchObject({
      ruleId: r.id,
      name: `${RUN} audited`,
      kind: "deadline_within",
      params: { minutes: 90 },
      scope: { connectionId: CONN, queuePattern: "orders.*", ownerTeam: "payments" },
      webhook: `http://127.0.0.1:${port}`,
    });
    expect(JSON.stringify(row)).not.toContain("SECRET-TOKEN");
    // Every role reads rules, with the webhook as its origin only.
    const list = await listAlertRules(viewer, meta());
    expect(list.find((x) => x.id === r.id)).toMatchObject({
      condition: "oldest letter lost to retention within 1 h 30 min",
      webhookOrigin: `http://127.0.0.1:${port}`,
    });
    expect(JSON.stringify(list)).not.toContain("SECRET-TOKEN");
  });

  it("refuses a viewer every change through the use cases, and audits each refusal", async () => {
    const r = await rule("guarded", "depth_above", { depth: 1 });
    const calls: Array<[string, (m: RequestMeta) => Promise<unknown>]> = [
      [
        "alert.rule_create",
        (m) =>
          createAlertRule(viewer, m, { name: "x", kind: "depth_above", params: { depth: 1 }, webhookUrl: hook("x") }),
      ],
      [
        "alert.rule_update",
        (m) =>
          updateAlertRule(viewer, m, {
            id: r.id,
            name: "x",
            kind: "depth_above",
            params: { depth: 1 },
            webhookUrl: null,
          }),
      ],
      ["alert.rule_delete", (m) => deleteAlertRule(viewer, m, { id: r.id })],
      ["alert.test_send", (m) => sendTestAlert(viewer, m, { id: r.id })],
    ];
    for (const [action, call] of calls) {
      const m = meta();
      const e = await call(m).catch((x: unknown) => x);
      expect(isAppError(e) && e.code, action).toBe("forbidden:ops:manage");
      const { rows } = await queryAudit({ actor: viewer.email, action }, { limit: 20 });
      expect(
        rows.filter((x) => x.requestId === m.requestId).map((x) => x.outcome),
        action,
      ).toEqual(["denied"]);
    }
    expect(await getDb().alertRule.findUnique({ where: { id: r.id } })).toMatchObject({ name: r.name });
    expect(gotFor("guarded")).toHaveLength(0);
  });

  it("refuses a viewer who calls the create action directly (a real session), and audits it", async () => {
    const requestId = `alerts-action-${randomUUID()}`;
    const req = new Request(`${ORIGIN}/alerts`, {
      method: "POST",
      headers: {
        "x-request-id": requestId,
        "x-forwarded-for": "127.0.0.1",
        origin: ORIGIN,
        host: new URL(ORIGIN).host,
        cookie: viewerCookie,
      },
    });
    const deniedBefore = await deniedCreates();
    const { createAlertRuleAction } = await import("@/app/alerts/actions");
    const res = await inRequestScope(req, () =>
      createAlertRuleAction({
        name: `${RUN} by a viewer`,
        kind: "depth_above",
        params: { depth: 1 },
        webhookUrl: hook("viewer"),
      }),
    );
    expect(res).toEqual({
      ok: false,
      error: {
        code: "forbidden:ops:manage",
        message: "Your role (viewer) does not allow this. Ask an admin if you need it.",
      },
    });
    expect(await getDb().alertRule.count({ where: { name: `${RUN} by a viewer` } })).toBe(0);
    expect(await deniedCreates()).toBe(deniedBefore + 1);
  });

  async function deniedCreates() {
    const { rows } = await queryAudit({ actor: viewer.email, action: "alert.rule_create" }, { limit: 200 });
    return rows.filter((r) => r.outcome === "denied" && r.actorRole === "viewer").length;
  }
});
