import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig as kafkaConfig } from "@/lib/brokers/kafka/test-kit";
import amqp from "amqplib";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { MOTO_ENDPOINT, SqsKit, testConfig as sqsConfig } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { sampleRound } from "./sampler";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * The sampler against real brokers and the real database: what a round records per DLQ, where
 * the oldest age comes from when the broker cannot tell, findings that open and resolve, and a
 * broker that goes away. Each test has its own connection id and queues.
 */
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});
const text = (s: string) => new TextEncoder().encode(s);

async function status(connectionId: string, queue: string) {
  return getDb().dlqStatus.findUnique({ where: { connectionId_queue: { connectionId, queue } } });
}
async function openFindings(connectionId: string) {
  return getDb().dlqFinding.findMany({ where: { connectionId, resolvedAt: null }, orderBy: { code: "asc" } });
}

/** A real scan job (kind "scan", as the console runs them) of one DLQ, run to its end. */
async function scan(adapter: SqsAdapter, queue: string) {
  const job = await jobStore().enqueue({
    kind: "scan",
    connectionId: adapter.connectionId,
    queue,
    params: { acceptRisk: true },
  });
  const worker = new JobWorker({
    handlers: { scan: scanHandler({ adapterFor: () => adapter }) },
    owner: `ops-test-${job.id}`,
    scope: { jobIds: [job.id] },
  });
  expect((await worker.runOnce())?.id).toBe(job.id);
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

describe("operations sampler on SQS (moto)", () => {
  it("records depth, takes the oldest age from the last scan (SentTimestamp) and says so, and puts the deadline at that plus the DLQ's retention", async () => {
    const kit = new SqsKit(MOTO_ENDPOINT);
    cleanups.push(() => kit.cleanup());
    const dlq = await kit.queue(kit.name("dlq"), { MessageRetentionPeriod: String(2 * 86400) });
    const before = Date.now();
    for (const b of ["a", "b", "c"]) await kit.send(dlq.url, { body: text(b) });
    const sent = Date.now();
    const adapter = new SqsAdapter(
      sqsConfig(MOTO_ENDPOINT, {
        id: `ops-sqs-${randomUUID().slice(0, 6)}`,
        discover: false,
        messageMoveTasks: false,
        dlqs: [{ name: dlq.name }],
      }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(() => adapter.close());

    const first = await sampleRound({ adapters: [adapter] });
    expect(first.connections).toEqual([
      expect.objectContaining({ connectionId: adapter.connectionId, ok: true, dlqs: 1 }),
    ]);
    let s = await status(adapter.connectionId, dlq.name);
    expect(s).toMatchObject({
      depth: 3,
      retentionMs: BigInt(2 * 86400_000),
      oldestAt: null,
      oldestSource: null,
      deadlineAt: null,
    });

    // The scan runs well after the sends: an oldest age taken from when the scan saw the letters would be later than `sent`.
    await new Promise((r) => setTimeout(r, 1500));
    await scan(adapter, dlq.name);
    await kit.send(dlq.url, { body: text("d") });
    await sampleRound({ adapters: [adapter] });
    s = await status(adapter.connectionId, dlq.name);
    expect(s?.depth).toBe(4);
    expect(s?.oldestSource).toBe("scan");
    expect(s?.oldestAsOf).not.toBeNull();
    // SQS keeps the first enqueue time: the oldest letter is the first one sent, not when the scan saw it.
    expect(s!.oldestAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(s!.oldestAt!.getTime()).toBeLessThanOrEqual(sent + 250);
    expect(s!.deadlineAt!.getTime() - s!.oldestAt!.getTime()).toBe(2 * 86400_000);
    // Without a counter, inflow is the depth's increase between the rounds.
    const minute = await getDb().dlqSample.findMany({
      where: { connectionId: adapter.connectionId, resolution: 60 },
      orderBy: { bucketAt: "asc" },
    });
    expect(minute.reduce((n, r) => n + (r.inflow ?? 0), 0)).toBe(1);
  });

  it("opens 'no owner' for an unowned DLQ and resolves it once an owner is named; keeps the history", async () => {
    const kit = new SqsKit(MOTO_ENDPOINT);
    cleanups.push(() => kit.cleanup());
    const dlq = await kit.queue(kit.name("dlq"));
    const adapter = new SqsAdapter(
      sqsConfig(MOTO_ENDPOINT, {
        id: `ops-own-${randomUUID().slice(0, 6)}`,
        discover: false,
        messageMoveTasks: false,
        dlqs: [{ name: dlq.name }],
      }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(() => adapter.close());
    await sampleRound({ adapters: [adapter] });
    expect((await openFindings(adapter.connectionId)).map((f) => [f.code, f.queue])).toContainEqual([
      "dlq.no_owner",
      dlq.name,
    ]);

    const owner = await getDb().dlqOwner.create({
      data: {
        position: 0,
        connectionPattern: adapter.connectionId,
        queuePattern: `${kit.prefix}-*`,
        team: "Payments",
        contact: "#payments",
      },
    });
    cleanups.push(() => getDb().dlqOwner.delete({ where: { id: owner.id } }));
    await sampleRound({ adapters: [adapter] });
    expect((await openFindings(adapter.connectionId)).map((f) => f.code)).not.toContain("dlq.no_owner");
    const history = await getDb().dlqFinding.findMany({
      where: { connectionId: adapter.connectionId, code: "dlq.no_owner" },
    });
    expect(history).toHaveLength(1);
    expect(history[0].resolvedAt).not.toBeNull();
  });

  it("keeps a DLQ's last figures and its findings when its broker does not answer, and marks the error", async () => {
    const kit = new SqsKit(MOTO_ENDPOINT);
    cleanups.push(() => kit.cleanup());
    const dlq = await kit.queue(kit.name("dlq"));
    await kit.send(dlq.url, { body: text("x") });
    const id = `ops-down-${randomUUID().slice(0, 6)}`;
    const live = new SqsAdapter(
      sqsConfig(MOTO_ENDPOINT, { id, discover: false, messageMoveTasks: false, dlqs: [{ name: dlq.name }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    const dead = new SqsAdapter(
      sqsConfig("http://127.0.0.1:1", { id, discover: false, messageMoveTasks: false, dlqs: [{ name: dlq.name }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(
      () => live.close(),
      () => dead.close(),
    );
    await sampleRound({ adapters: [live] });
    const findings = (await openFindings(id)).map((f) => f.id);
    expect(findings.length).toBeGreaterThan(0);

    const r = await sampleRound({ adapters: [dead] });
    expect(r.connections[0]).toMatchObject({ ok: false });
    expect(r.connections[0].error).toMatch(/\S/);
    const s = await status(id, dlq.name);
    expect(s?.depth).toBe(1);
    expect(s?.error).toBe(r.connections[0].error);
    expect((await openFindings(id)).map((f) => f.id)).toEqual(findings);

    await sampleRound({ adapters: [live] });
    expect((await status(id, dlq.name))?.error).toBeNull();
  });
});

describe("operations sampler on Kafka", () => {
  it("counts inflow exactly from end offsets, and takes the oldest age and the deadline from the broker (log-start timestamp plus retention.ms)", async () => {
    const kit = new KafkaKit(`ops-${randomUUID().slice(0, 8)}`);
    cleanups.push(() => kit.cleanup());
    const topic = await kit.createTopic(`${kit.prefix}-orders.DLT`, 2, { "retention.ms": String(3 * 86400_000) });
    const producer = await kit.getProducer();
    const t0 = Date.now() - 3600_000;
    const send = (n: number, from: number) =>
      producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: n }, (_, i) => ({
          partition: (from + i) % 2,
          key: `k${from + i}`,
          value: `letter ${from + i}`,
          timestamp: String(t0 + (from + i) * 1000),
        })),
      });
    await send(3, 0);
    const adapter = new KafkaAdapter(
      kafkaConfig({ id: `ops-kafka-${randomUUID().slice(0, 6)}`, discover: false, dlqs: [{ name: topic }] }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: null },
    );
    cleanups.push(() => adapter.close());

    await sampleRound({ adapters: [adapter] });
    await send(4, 3);
    // Letters that arrive and leave between two rounds still count: the counter, not the depth.
    const admin = await kit.getAdmin();
    await admin.fetchTopicMetadata({ topics: [topic] }); // kafkajs finds the partition leader only for topics it has metadata of
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: "1" }] });
    await sampleRound({ adapters: [adapter] });
    const s = await status(adapter.connectionId, topic);
    expect(s).toMatchObject({ depth: 6, enteredTotal: 7n, oldestSource: "broker", retentionMs: BigInt(3 * 86400_000) });
    // Record 0 (partition 0) was deleted: the oldest left is record 1 (partition 1).
    expect(s!.oldestAt!.getTime()).toBe(t0 + 1000);
    expect(s!.deadlineAt!.getTime()).toBe(t0 + 1000 + 3 * 86400_000);
    const minute = await getDb().dlqSample.findMany({
      where: { connectionId: adapter.connectionId, resolution: 60 },
      orderBy: { bucketAt: "asc" },
    });
    expect(minute.reduce((n, r) => n + (r.inflow ?? 0), 0)).toBe(4);
    // The round keeps the last hour's depth per minute with the status, for the overview.
    expect(s!.trend).toEqual(minute.map((r) => ({ t: r.bucketAt.getTime() / 1000, d: r.depth })));
  });
});

describe("operations sampler on RabbitMQ", () => {
  it("takes the oldest age from the head letter's timestamp and the deadline from the DLQ's message TTL; the TTL itself is a finding", async () => {
    const name = `ops-rmq-${randomUUID().slice(0, 8)}.dlq`;
    const conn = await amqp.connect(AMQP_URL);
    cleanups.push(() => conn.close());
    const ch = await conn.createConfirmChannel();
    await ch.assertQueue(name, { durable: true, arguments: { "x-message-ttl": 6 * 3600_000 } });
    cleanups.push(() => ch.deleteQueue(name));
    const sentAt = Math.floor(Date.now() / 1000) - 2 * 3600;
    for (let i = 0; i < 3; i++)
      ch.sendToQueue(name, Buffer.from(`letter ${i}`), { persistent: true, timestamp: sentAt + i });
    await ch.waitForConfirms();
    const adapter = new RabbitMqAdapter(
      rabbitConfig({ id: `ops-rmq-${randomUUID().slice(0, 6)}`, discover: false, dlqs: [{ name }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(() => adapter.close());

    // The management API's figures lag the broker by a few seconds (the depth and the head's timestamp not always together).
    let s: Awaited<ReturnType<typeof status>> = null;
    const settled = () => s?.depth === 3 && s.oldestSource === "broker";
    for (let i = 0; i < 40 && !settled(); i++) {
      await sampleRound({ adapters: [adapter] });
      s = await status(adapter.connectionId, name);
      if (!settled()) await new Promise((r) => setTimeout(r, 500));
    }
    expect(s).toMatchObject({ depth: 3, oldestSource: "broker", retentionMs: BigInt(6 * 3600_000) });
    expect(s!.oldestAt!.getTime()).toBe(sentAt * 1000);
    expect(s!.deadlineAt!.getTime()).toBe(sentAt * 1000 + 6 * 3600_000);
    expect((await openFindings(adapter.connectionId)).map((f) => f.code)).toEqual(
      expect.arrayContaining(["rabbitmq.dlq_message_ttl", "dlq.no_owner"]),
    );

    // Inflow without a counter (3.10 does not count dead-lettered letters): the depth's increase.
    const inflowSoFar = async () =>
      (await getDb().dlqSample.findMany({ where: { connectionId: adapter.connectionId, resolution: 900 } })).reduce(
        (n, r) => n + (r.inflow ?? 0),
        0,
      );
    const before = await inflowSoFar();
    for (let i = 3; i < 5; i++)
      ch.sendToQueue(name, Buffer.from(`letter ${i}`), { persistent: true, timestamp: sentAt + i });
    await ch.waitForConfirms();
    for (let i = 0; i < 40 && s?.depth !== 5; i++) {
      await new Promise((r) => setTimeout(r, 500));
      await sampleRound({ adapters: [adapter] });
      s = await status(adapter.connectionId, name);
    }
    expect(s?.depth).toBe(5);
    expect((await inflowSoFar()) - before).toBe(2);
  });
});
