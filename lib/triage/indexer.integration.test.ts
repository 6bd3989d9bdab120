import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig as kafkaConfig } from "@/lib/brokers/kafka/test-kit";
import { PulsarAdapter } from "@/lib/brokers/pulsar/adapter";
import { shortName } from "@/lib/brokers/pulsar/client";
import { PulsarKit, testConfig as pulsarConfig } from "@/lib/brokers/pulsar/test-kit";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { mgmtRequest, RabbitKit, testConfig as rabbitConfig, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, SqsKit, testConfig as sqsConfig } from "@/lib/brokers/sqs/test-kit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { consoleConfigSchema, type IndexingConfig } from "@/lib/config";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { sampleRound } from "@/lib/operations/sampler";
import { indexRound, type IndexRoundReport } from "./indexer";
import { scanHandler } from "./scan";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * The triage indexer on the real brokers: Kafka and Pulsar DLQs whose new letters reach their
 * groups without a scan (only the new ones are read), RabbitMQ classic and SQS DLQs rescanned after
 * the sampler saw them change and not before, a quorum DLQ with a delivery limit never read, and
 * two workers indexing one DLQ at once.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const cfg = (over: Partial<IndexingConfig> = {}): IndexingConfig => ({
  ...consoleConfigSchema.shape.triage.parse({}).indexing,
  ...over,
});
const id = (kind: string) => `idx-${kind}-${randomUUID().slice(0, 6)}`;

function round(adapter: BrokerAdapter, o: { config?: IndexingConfig; owner?: string; now?: Date } = {}) {
  return indexRound({
    adapters: () => [adapter],
    config: () => o.config ?? cfg(),
    owner: o.owner ?? "test-indexer",
    now: o.now ? () => o.now! : undefined,
    summaryEverySeconds: 0,
  });
}

const of = (r: IndexRoundReport, queue: string) => r.dlqs.find((d) => d.queue === queue);

async function groups(connectionId: string, queue: string) {
  return getDb().triageGroup.findMany({
    where: { connectionId, queue },
    select: { exceptionClass: true, count: true },
    orderBy: { exceptionClass: "asc" },
  });
}
const total = async (connectionId: string, queue: string) =>
  (await groups(connectionId, queue)).reduce((n, g) => n + g.count, 0);

const scanJobs = (connectionId: string, queue: string) =>
  getDb().job.findMany({ where: { kind: "scan", connectionId, queue }, orderBy: { createdAt: "asc" } });

const state = (connectionId: string, queue: string) =>
  getDb().triageIndexState.findUnique({ where: { connectionId_queue: { connectionId, queue } } });

/** Sampling rounds until the sampler records `depth` (a management API's figures lag the broker). */
async function sampleUntil(adapter: BrokerAdapter, queue: string, depth: number) {
  for (let i = 0; i < 40; i++) {
    await sampleRound({ adapters: [adapter] });
    const s = await getDb().dlqStatus.findUnique({
      where: { connectionId_queue: { connectionId: adapter.connectionId, queue } },
    });
    if (s?.depth === depth) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the sampler never saw ${queue} at depth ${depth}`);
}

async function runJob(adapter: BrokerAdapter, jobId: string) {
  const worker = new JobWorker({
    handlers: { scan: scanHandler({ adapterFor: () => adapter }) },
    owner: `test-${jobId}`,
    leaseMs: 30_000,
    scope: { jobIds: [jobId] },
  });
  expect((await worker.runOnce())?.id).toBe(jobId);
  expect((await jobStore().get(jobId))?.state).toBe("succeeded");
}

const springFailure = (cause: string, i: number) => ({
  "kafka_dlt-original-topic": "orders",
  "kafka_dlt-exception-fqcn": "org.springframework.kafka.listener.ListenerExecutionFailedException",
  "kafka_dlt-exception-cause-fqcn": `com.acme.${cause}`,
  "kafka_dlt-exception-message": `Listener failed; com.acme.${cause}: order ${i} failed`,
});

describe("triage indexer, where reading is free", () => {
  it("a Kafka DLT: new letters reach their groups without a scan, and each round reads only the new ones", async () => {
    const kit = new KafkaKit();
    const adapter = new KafkaAdapter(kafkaConfig({ id: id("kafka") }), {
      allManagedHeaders: MANAGED_HEADERS,
      handledStore: prismaHandledStore(),
    });
    cleanups.push(
      () => kit.cleanup(),
      () => adapter.close(),
    );
    const dlt = await kit.createTopic(`${kit.name("orders")}.DLT`, 2);
    const letters = (from: number, n: number, cause: string) =>
      Array.from({ length: n }, (_, k) => ({
        body: enc(`{"i":${from + k}}`),
        key: `k${from + k}`,
        headers: springFailure(cause, from + k),
      }));
    await kit.produce(dlt, letters(0, 4, "OutOfStockException"));
    await sampleUntil(adapter, dlt, 4);

    const first = await round(adapter);
    expect(of(first, dlt)).toMatchObject({ outcome: "indexed", letters: 4 });
    expect(await groups(adapter.connectionId, dlt)).toEqual([
      { exceptionClass: "com.acme.OutOfStockException", count: 4 },
    ]);

    await kit.produce(dlt, letters(4, 3, "PaymentDeclinedException"));
    await sampleUntil(adapter, dlt, 7);
    const second = await round(adapter);
    // Only the three new letters were read.
    expect(of(second, dlt)).toMatchObject({ outcome: "indexed", letters: 3 });
    expect(await groups(adapter.connectionId, dlt)).toEqual([
      { exceptionClass: "com.acme.OutOfStockException", count: 4 },
      { exceptionClass: "com.acme.PaymentDeclinedException", count: 3 },
    ]);
    const s = await state(adapter.connectionId, dlt);
    expect(Object.values(s!.positions as Record<string, string>).reduce((n, o) => n + Number(o), 0)).toBe(7);

    // Caught up: one more look (it read letters last round), then nothing until the sampler sees a change.
    expect(of(await round(adapter), dlt)).toMatchObject({ outcome: "current", letters: 0 });
    expect(of(await round(adapter), dlt)).toBeUndefined();
    expect(await scanJobs(adapter.connectionId, dlt)).toEqual([]);
    expect((await state(adapter.connectionId, dlt))?.indexedAt).not.toBeNull();
  });

  it("a Pulsar DLQ: new letters reach their groups without a scan, read after the last entry read", async () => {
    const kit = new PulsarKit();
    const adapter = new PulsarAdapter(pulsarConfig({ id: id("pulsar"), namespaces: [kit.ns] }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    cleanups.push(
      () => kit.cleanup(),
      () => adapter.close(),
    );
    const t = await kit.createTopic(`${kit.name("orders")}-sub-DLQ`);
    const dlq = shortName(t);
    const letter = (i: number, cls: string) => ({
      body: enc(`{"i":${i}}`),
      properties: { REAL_TOPIC: "persistent://public/default/orders", EXCEPTION_CLASS: cls, "exception-class": cls },
    });
    await adapter.describeDlq(dlq); // the console's subscription, from the earliest letter
    await kit.produce(t, [letter(0, "com.acme.A"), letter(1, "com.acme.A")]);
    await sampleUntil(adapter, dlq, 2);

    expect(of(await round(adapter), dlq)).toMatchObject({ outcome: "indexed", letters: 2 });
    expect(await total(adapter.connectionId, dlq)).toBe(2);

    await kit.produce(t, [letter(2, "com.acme.A"), letter(3, "com.acme.A"), letter(4, "com.acme.A")]);
    await sampleUntil(adapter, dlq, 5);
    expect(of(await round(adapter), dlq)).toMatchObject({ outcome: "indexed", letters: 3 });
    expect(await total(adapter.connectionId, dlq)).toBe(5);
    expect(of(await round(adapter), dlq)).toMatchObject({ outcome: "current", letters: 0 });
    expect(of(await round(adapter), dlq)).toBeUndefined();
    expect(await scanJobs(adapter.connectionId, dlq)).toEqual([]);
  });

  it("a RabbitMQ classic DLQ is rescanned after inflow, not before, and no more often than the interval", async () => {
    const kit = new RabbitKit();
    cleanups.push(() => kit.cleanup());
    const { dlq, source } = await kit.dlqByReject([0, 1, 2].map((i) => ({ body: enc(`letter ${i}`) })));
    const adapter = new RabbitMqAdapter(rabbitConfig({ id: id("rmq"), discover: false, dlqs: [{ name: dlq }] }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    cleanups.push(() => adapter.close());
    const config = cfg({ intervalSeconds: 60 });
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000);
    await sampleUntil(adapter, dlq, 3);

    const first = of(await round(adapter, { config, now: at(0) }), dlq);
    expect(first).toMatchObject({ outcome: "queued" });
    await runJob(adapter, first!.jobId!);
    expect(of(await round(adapter, { config, now: at(1) }), dlq)).toMatchObject({ outcome: "indexed", letters: 3 });
    expect(await total(adapter.connectionId, dlq)).toBe(3);

    // Nothing came in: no rescan, however long it waits.
    await sampleUntil(adapter, dlq, 3);
    expect(of(await round(adapter, { config, now: at(3600) }), dlq)).toBeUndefined();
    expect(await scanJobs(adapter.connectionId, dlq)).toHaveLength(1);

    // Inflow: rescanned, but not before the interval since the last rescan.
    for (const i of [3, 4]) await kit.publish(source, { body: enc(`letter ${i}`) });
    await kit.rejectAll(source, 2);
    await sampleUntil(adapter, dlq, 5);
    expect(of(await round(adapter, { config, now: at(30) }), dlq)).toBeUndefined();
    expect(await scanJobs(adapter.connectionId, dlq)).toHaveLength(1);
    const second = of(await round(adapter, { config, now: at(61) }), dlq);
    expect(second).toMatchObject({ outcome: "queued" });
    await runJob(adapter, second!.jobId!);
    expect(of(await round(adapter, { config, now: at(62) }), dlq)).toMatchObject({ outcome: "indexed", letters: 5 });
    expect(await total(adapter.connectionId, dlq)).toBe(5);
    const audit = await getDb().auditEvent.findMany({
      where: { operationId: second!.jobId!, action: "triage.scan_start" },
    });
    expect(audit).toEqual([expect.objectContaining({ actorEmail: "system", outcome: "success" })]);
  });

  it("an SQS DLQ is rescanned after inflow and not before", async () => {
    const kit = new SqsKit(ELASTICMQ_ENDPOINT);
    cleanups.push(() => kit.cleanup());
    const q = await kit.queue(kit.name("dlq"));
    for (const b of ["a", "b"]) await kit.send(q.url, { body: enc(b) });
    const adapter = new SqsAdapter(
      sqsConfig(ELASTICMQ_ENDPOINT, { id: id("sqs"), discover: false, dlqs: [{ name: q.name }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    cleanups.push(() => adapter.close());
    const config = cfg({ intervalSeconds: 60 });
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000);
    await sampleUntil(adapter, q.name, 2);

    const first = of(await round(adapter, { config, now: at(0) }), q.name);
    expect(first).toMatchObject({ outcome: "queued" });
    await runJob(adapter, first!.jobId!);
    await round(adapter, { config, now: at(1) });
    expect(await total(adapter.connectionId, q.name)).toBe(2);

    await sampleUntil(adapter, q.name, 2);
    expect(of(await round(adapter, { config, now: at(3600) }), q.name)).toBeUndefined();
    expect(await scanJobs(adapter.connectionId, q.name)).toHaveLength(1);

    await kit.send(q.url, { body: enc("c") });
    await sampleUntil(adapter, q.name, 3);
    const second = of(await round(adapter, { config, now: at(3600) }), q.name);
    expect(second).toMatchObject({ outcome: "queued" });
    await runJob(adapter, second!.jobId!);
    await round(adapter, { config, now: at(3601) });
    expect(await total(adapter.connectionId, q.name)).toBe(3);
  });

  it("a quorum DLQ with a delivery limit is never read by the indexer: the broker's delivery counts stay as they were", async () => {
    const kit = new RabbitKit();
    cleanups.push(() => kit.cleanup());
    const dlq = await kit.queue(kit.name("dlq"), { "x-queue-type": "quorum", "x-delivery-limit": 3 });
    for (const i of [0, 1, 2]) await kit.publish(dlq, { body: enc(`letter ${i}`) });
    const adapter = new RabbitMqAdapter(rabbitConfig({ id: id("quorum"), discover: false, dlqs: [{ name: dlq }] }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    cleanups.push(() => adapter.close());
    await sampleUntil(adapter, dlq, 3);
    expect(of(await round(adapter), dlq)).toMatchObject({ outcome: "risk" });
    await kit.publish(dlq, { body: enc("letter 3") });
    await sampleUntil(adapter, dlq, 4);
    expect(of(await round(adapter, { now: new Date(Date.now() + 86_400_000) }), dlq)).toMatchObject({
      outcome: "risk",
    });

    expect(await scanJobs(adapter.connectionId, dlq)).toEqual([]);
    expect(await getDb().triageLetter.count({ where: { connectionId: adapter.connectionId, queue: dlq } })).toBe(0);
    const q = (await (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(dlq)}`)).json()) as {
      messages: number;
      message_stats?: { deliver_get?: number; redeliver?: number };
    };
    expect(q.messages).toBe(4);
    expect(q.message_stats?.deliver_get ?? 0).toBe(0);
    expect(q.message_stats?.redeliver ?? 0).toBe(0);
  });

  it("two workers indexing the same Kafka DLT at once never count a letter twice", async () => {
    const kit = new KafkaKit();
    const adapter = new KafkaAdapter(kafkaConfig({ id: id("twice") }), {
      allManagedHeaders: MANAGED_HEADERS,
      handledStore: prismaHandledStore(),
    });
    cleanups.push(
      () => kit.cleanup(),
      () => adapter.close(),
    );
    const dlt = await kit.createTopic(`${kit.name("orders")}.DLT`, 3);
    const batch = (from: number, n: number) =>
      Array.from({ length: n }, (_, k) => ({
        body: enc(`{"i":${from + k}}`),
        key: `k${from + k}`,
        headers: springFailure("OutOfStockException", from + k),
      }));
    const both = () =>
      Promise.all([
        round(adapter, { owner: "replica-a", config: cfg({ maxLettersPerRound: 100 }) }),
        round(adapter, { owner: "replica-b", config: cfg({ maxLettersPerRound: 100 }) }),
      ]);
    await kit.produce(dlt, batch(0, 150));
    await sampleUntil(adapter, dlt, 150);
    // Until both are caught up: each round of either replica reads at most 100 letters.
    let read = 0;
    for (let i = 0; i < 6; i++) for (const r of await both()) read += of(r, dlt)?.letters ?? 0;
    expect(read).toBe(150);
    expect(await total(adapter.connectionId, dlt)).toBe(150);

    await kit.produce(dlt, batch(150, 60));
    await sampleUntil(adapter, dlt, 210);
    for (let i = 0; i < 4; i++) for (const r of await both()) read += of(r, dlt)?.letters ?? 0;
    expect(read).toBe(210);
    expect(await total(adapter.connectionId, dlt)).toBe(210);
    expect(await getDb().triageLetter.count({ where: { connectionId: adapter.connectionId, queue: dlt } })).toBe(210);
  });
});
