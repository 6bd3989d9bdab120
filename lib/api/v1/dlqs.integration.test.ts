import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AMQP_URL } from "@/lib/brokers/rabbitmq/test-kit";
import { getAdapter } from "@/lib/connections/registry";
import { getDb } from "@/lib/db";
import { sampleRound } from "@/lib/operations/sampler";
import { callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import { GET as dlqsGET } from "@/app/api/v1/dlqs/route";

/**
 * GET /api/v1/dlqs with the operations sampler's figures, on the configured local RabbitMQ (its
 * management API discovers the DLQ from its source queue) and real Postgres: one real sampling
 * round, then the listing as a token sees it, checked against the served document.
 */
const CONNECTION = "local-rabbitmq";
const SIX_HOURS = 6 * 3600_000;
const tag = randomUUID().slice(0, 8);
const dlq = `v1ops-${tag}.dlq`;
const unsampled = `v1ops-${tag}-late.dlq`;
const sentAt = Math.floor(Date.now() / 1000) - 2 * 3600;
const cleanups: Array<() => Promise<unknown>> = [];
let users: Record<"viewer" | "admin", V1User>;

/** A DLQ (with a message TTL: a retention the deadline follows) and a source queue dead-lettering into it through the default exchange. */
async function declareDlq(ch: amqp.ConfirmChannel, name: string) {
  await ch.assertQueue(name, { durable: true, arguments: { "x-message-ttl": SIX_HOURS } });
  await ch.assertQueue(`${name}.source`, {
    durable: true,
    arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": name },
  });
  cleanups.push(
    () => ch.deleteQueue(`${name}.source`),
    () => ch.deleteQueue(name),
  );
}

type Listed = { name: string; operations: Record<string, any> | null };
async function listed(token: string) {
  const r = await callV1(dlqsGET as V1Handler, "/api/v1/dlqs", { token });
  expect(r.status).toBe(200);
  const conn = (r.body.connections as Array<{ connectionId: string; dlqs: Listed[] }>).find(
    (c) => c.connectionId === CONNECTION,
  );
  return { ...r, dlqs: conn?.dlqs ?? [] };
}

beforeAll(async () => {
  users = await v1Users("api-v1-dlqs", ["viewer", "admin"] as const);
  const conn = await amqp.connect(AMQP_URL);
  cleanups.push(() => conn.close());
  const ch = await conn.createConfirmChannel();
  await declareDlq(ch, dlq);
  for (let i = 0; i < 3; i++)
    ch.sendToQueue(dlq, Buffer.from(`letter ${i}`), { persistent: true, timestamp: sentAt + i });
  await ch.waitForConfirms();
  const owner = await getDb().dlqOwner.create({
    data: {
      position: 0,
      connectionPattern: CONNECTION,
      queuePattern: dlq,
      team: `team-${tag}`,
      contact: `#dlq-${tag}`,
      createdBy: "api-v1-dlqs@test",
    },
  });
  cleanups.push(() => getDb().dlqOwner.delete({ where: { id: owner.id } }));

  // One round of the sampler over the connection, repeated only while the management API still lags (depth and head timestamp arrive separately).
  const adapter = getAdapter(CONNECTION);
  for (let i = 0; i < 40; i++) {
    await sampleRound({ adapters: [adapter] });
    const s = await getDb().dlqStatus.findUnique({
      where: { connectionId_queue: { connectionId: CONNECTION, queue: dlq } },
    });
    if (s?.depth === 3 && s.oldestSource === "broker") break;
    await new Promise((r) => setTimeout(r, 500));
  }
  // Declared after the sampling: listed, never sampled.
  await declareDlq(ch, unsampled);
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await getDb().dlqStatus.deleteMany({ where: { connectionId: CONNECTION, queue: { in: [dlq, unsampled] } } });
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
});

describe("GET /api/v1/dlqs with the operations figures", () => {
  it("gives each sampled DLQ the sampler's latest figures (oldest letter, deadline, trend, findings, owner) in the documented shape", async () => {
    const { res, body, dlqs } = await listed(users.viewer.token);
    await expectDocumented("get", "/api/v1/dlqs", res, body);
    const ops = dlqs.find((d) => d.name === dlq)?.operations;
    expect(ops).toBeTruthy();

    const status = await getDb().dlqStatus.findUniqueOrThrow({
      where: { connectionId_queue: { connectionId: CONNECTION, queue: dlq } },
    });
    expect(ops!.sampledAt).toBe(status.sampledAt.toISOString());
    expect(ops!.oldestAt).toBe(new Date(sentAt * 1000).toISOString());
    expect(ops!.oldestSource).toBe("broker");
    expect(ops!.retentionMs).toBe(SIX_HOURS);
    expect(ops!.deadlineAt).toBe(new Date(sentAt * 1000 + SIX_HOURS).toISOString());
    const age = (new Date(body.fetchedAt as string).getTime() - sentAt * 1000) / 1000;
    expect(ops!.oldestAgeSeconds).toBeGreaterThanOrEqual(Math.floor(age) - 1);
    expect(ops!.oldestAgeSeconds).toBeLessThanOrEqual(Math.ceil(age));
    expect(ops!.trend).toHaveLength(60);
    // The sample's minute is the last point, or the one before when the call crossed a minute boundary.
    const trend = ops!.trend as Array<number | null>;
    const last = trend.findLastIndex((d) => d !== null);
    expect(trend[last]).toBe(3);
    expect(last).toBeGreaterThanOrEqual(58);
    expect(ops!.owner).toEqual({ team: `team-${tag}`, contact: `#dlq-${tag}`, source: "console" });

    // The findings as the sampler recorded them: a message TTL on a DLQ is one, and the owner silenced "no owner".
    const open = await getDb().dlqFinding.findMany({
      where: { connectionId: CONNECTION, queue: dlq, resolvedAt: null },
    });
    expect(open.map((f) => f.code)).toContain("rabbitmq.dlq_message_ttl");
    expect(open.map((f) => f.code)).not.toContain("dlq.no_owner");
    expect(ops!.openFindings).toBe(open.length);
    const rank = { info: 1, warning: 2, critical: 3 } as const;
    const worst = open.map((f) => f.severity as keyof typeof rank).sort((a, b) => rank[b] - rank[a])[0];
    expect(ops!.worstFinding).toBe(worst);
  });

  it("gives a DLQ the sampler has never seen `operations: null`, and every role with ops:read the same figures", async () => {
    let dlqs: Listed[] = [];
    // The adapter reuses its management snapshot for a few seconds: wait for the late DLQ to be listed.
    for (let i = 0; i < 30 && !dlqs.some((d) => d.name === unsampled); i++) {
      if (i) await new Promise((r) => setTimeout(r, 500));
      ({ dlqs } = await listed(users.admin.token));
    }
    expect(dlqs.find((d) => d.name === unsampled)).toMatchObject({ operations: null });
    const viewer = await listed(users.viewer.token);
    expect(dlqs.find((d) => d.name === dlq)?.operations?.sampledAt).toBe(
      viewer.dlqs.find((d) => d.name === dlq)?.operations?.sampledAt,
    );
  });
});
