/**
 * The triage indexer's cost, in one run (ratios within the run; absolute figures drift on a shared
 * machine):
 *  1. A Kafka DLT (3 partitions) receives BENCH_RATE letters per second (default 1,000) for
 *     BENCH_SECONDS (default 60) from a child process, while this process runs the worker's loops
 *     as the worker would: the sampler every 30 s, the indexer every 5 s (the config defaults).
 *     Per letter: its arrival (producer clock, a header) to the end of the indexer round whose
 *     group refresh included it; p50, p99 and the largest.
 *  2. A scan job of the same DLT (the same letters), as an operator's Scan runs it.
 *     CPU per letter of this process and of Postgres in 1 (while the indexer's rounds run) and 2;
 *     both paths are warmed up first on a topic of their own; the producer runs apart.
 *  3. 1,000 idle DLQs: the cost of one indexer round over them (time, broker calls), then with 10
 *     of them changed. The adapter is a counting stub: what is measured is the indexer's own work.
 *   npm run bench:indexing        (BENCH_RATE, BENCH_SECONDS; BENCH_IDLE for the idle count; smoke: 200/s for
 *                                  6 s, 50 idle DLQs, indexer rounds every second and sampler rounds every 2,
 *                                  a smaller warm-up)
 */
import { execFile } from "node:child_process";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "../lib/brokers/kafka/client";
import { KafkaAdapter } from "../lib/brokers/kafka/adapter";
import { KAFKA_BROKERS, testConfig } from "../lib/brokers/kafka/test-kit";
import { createTopicWithLeaders } from "../lib/brokers/kafka/topic-ready";
import type { BrokerAdapter } from "../lib/brokers/contract/adapter";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { cpuNow, cpuScope, cpuSince, type Cpu, measureBroker, zeroCpu } from "./cpu";
import { report, SMOKE, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const RATE = size("BENCH_RATE", 1000, 200);
const SECONDS = size("BENCH_SECONDS", 60, 6);
const IDLE = size("BENCH_IDLE", 1000, 50);
measureBroker("kafka");
const PARTITIONS = 3;
const SENT_HEADER = "bench-sent-at";

/** The child: produces RATE letters a second for SECONDS into the topic, in 100 ms steps. */
async function produce(topic: string) {
  const kafka = mendKafkajs(
    new Kafka({ brokers: KAFKA_BROKERS, clientId: "bench-indexing", logLevel: logLevel.NOTHING }),
  );
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const value = Buffer.alloc(1024, "x");
  const perStep = Math.max(1, Math.round(RATE / 10));
  const t0 = Date.now();
  let sent = 0;
  for (let step = 0; step < SECONDS * 10; step++) {
    const messages = [];
    for (let j = 0; j < perStep; j++, sent++) {
      messages.push({
        partition: sent % PARTITIONS,
        key: `k-${sent % 100}`,
        value,
        headers: {
          [SENT_HEADER]: String(Date.now()),
          "kafka_dlt-original-topic": "orders",
          "kafka_dlt-exception-fqcn": "org.springframework.kafka.listener.ListenerExecutionFailedException",
          "kafka_dlt-exception-cause-fqcn": `com.acme.Failure${sent % 4}`,
          "kafka_dlt-exception-message": `Listener failed; com.acme.Failure${sent % 4}: order ${sent} failed`,
        },
      });
    }
    await producer.send({ topic, acks: -1, messages });
    const wait = t0 + (step + 1) * 100 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await producer.disconnect();
  process.stdout.write(String(sent));
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function main() {
  const db = await createTestDatabase("dlq_bench_indexing");
  process.env.DATABASE_URL = db.url;
  process.env.DLQ_INDEX_KEY ??= Buffer.alloc(32, 7).toString("base64");
  process.env.DLQ_AUDIT_KEY ??= Buffer.alloc(32, 9).toString("base64");
  await applyMigrations({ databaseUrl: db.url });
  const { getDb, closeDb } = await import("../lib/db");
  const { consoleConfigSchema } = await import("../lib/config");
  const { indexRound } = await import("../lib/triage/indexer");
  const { sampleRound } = await import("../lib/operations/sampler");
  const { databaseNow, closeBulkPool } = await import("../lib/triage/index-store");
  const { jobStore } = await import("../lib/jobs/store");
  const { JobWorker } = await import("../lib/jobs/worker");
  const { scanHandler } = await import("../lib/triage/scan");
  const { prismaHandledStore } = await import("../lib/connections/kafka-handled-store");
  const defaults = consoleConfigSchema.shape.triage.parse({}).indexing;
  // The smoke's rounds come every second, so its tail ends in seconds rather than half a minute.
  const cfg = SMOKE ? { ...defaults, roundSeconds: 1 } : defaults;
  const topic = `bench.indexing.${process.pid}.DLT`;
  // In the measured process: mended as the console's clients are, or its idle connections spin.
  const kafka = mendKafkajs(
    new Kafka({ brokers: KAFKA_BROKERS, clientId: "bench-indexing", logLevel: logLevel.NOTHING }),
  );
  const admin = kafka.admin();
  await admin.connect();
  await createTopicWithLeaders(admin, { topic, numPartitions: PARTITIONS, replicationFactor: 1 });
  const adapter = new KafkaAdapter(testConfig({ id: "bench-kafka", discover: false, dlqs: [{ name: topic }] }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  const us = (s: number, n: number) => Math.round((s * 1e6) / Math.max(1, n));
  const warmTopic = `bench.indexing.${process.pid}.warm.DLT`;
  const warm = new KafkaAdapter(testConfig({ id: "bench-warm", discover: false, dlqs: [{ name: warmTopic }] }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  try {
    // 0. Both code paths warmed up (JIT, connections) on a topic of their own, so neither pays it in the figures.
    await createTopicWithLeaders(admin, { topic: warmTopic, numPartitions: PARTITIONS, replicationFactor: 1 });
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < (SMOKE ? 1 : 10); i++)
      await producer.send({
        topic: warmTopic,
        messages: Array.from({ length: 1000 }, (_, j) => ({
          value: Buffer.alloc(1024, "x"),
          headers: { "kafka_dlt-exception-cause-fqcn": `com.acme.Warm${j % 4}` },
        })),
      });
    await producer.disconnect();
    await sampleRound({ adapters: [warm] });
    await indexRound({ adapters: () => [warm], config: () => cfg, owner: "bench" });
    const warmJob = await jobStore().enqueue({ kind: "scan", connectionId: warm.connectionId, queue: warmTopic });
    await new JobWorker({
      handlers: { scan: scanHandler({ adapterFor: () => warm }) },
      owner: "bench",
      scope: { jobIds: [warmJob.id] },
    }).runOnce();

    // 1. The live tail.
    console.log(`producing ${RATE} letters/s for ${SECONDS} s into ${topic} (${PARTITIONS} partitions)…`);
    const child = new Promise<number>((resolve, reject) =>
      execFile(process.execPath, [...process.execArgv, process.argv[1], "produce", topic], (e, out) =>
        e ? reject(e) : resolve(Number(out)),
      ),
    );
    let producing = true;
    void child.finally(() => {
      producing = false;
    });
    const latencies: number[] = [];
    let mark = await databaseNow();
    const measure = async () => {
      const s = await getDb().triageIndexState.findUnique({
        where: { connectionId_queue: { connectionId: adapter.connectionId, queue: topic } },
      });
      if (!s || s.summaryPending) return;
      // Every letter written up to now is in its group: their latencies, to this moment.
      const now = await databaseNow();
      const rows = await getDb().$queryRawUnsafe<Array<{ sent: string }>>(
        `SELECT headers->>'${SENT_HEADER}' AS sent FROM triage_letters
          WHERE connection_id = $1 AND queue = $2 AND last_seen_at > $3::timestamptz AND last_seen_at <= $4::timestamptz`,
        adapter.connectionId,
        topic,
        mark.toISOString(),
        now.toISOString(),
      );
      for (const r of rows) latencies.push(Date.now() - Number(r.sent));
      mark = now;
    };
    const tailCpu: Cpu = zeroCpu();
    let indexed = 0;
    let lastSample = 0;
    let rounds = 0;
    let idleRounds = 0;
    while (producing || idleRounds < 2) {
      const started = Date.now();
      if (started - lastSample >= (SMOKE ? 2_000 : 30_000)) {
        await sampleRound({ adapters: [adapter] });
        lastSample = started;
      }
      // The indexer's own CPU: only while its round runs (the sampler and this bench's queries are left out).
      const c0 = cpuNow();
      const r = await indexRound({ adapters: () => [adapter], config: () => cfg, owner: "bench" });
      const c = await cpuSince(c0);
      for (const k of Object.keys(tailCpu) as Array<keyof Cpu>) tailCpu[k] += c[k];
      rounds++;
      const n = r.dlqs.reduce((k, d) => k + d.letters, 0);
      indexed += n;
      await measure();
      if (!producing) idleRounds = n === 0 ? idleRounds + 1 : 0;
      const wait = started + cfg.roundSeconds * 1000 - Date.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    }
    const sent = await child;
    latencies.sort((a, b) => a - b);
    console.log(
      `tail: ${sent} sent, ${indexed} indexed in ${rounds} rounds; arrival → in its group: p50 ${(pct(latencies, 50) / 1000).toFixed(1)} s, p99 ${(pct(latencies, 99) / 1000).toFixed(1)} s, max ${(latencies[latencies.length - 1] / 1000).toFixed(1)} s (${latencies.length} letters measured; goal p99 ≤ 60 s)`,
    );

    // 2. A scan of the same letters.
    const job = await jobStore().enqueue({ kind: "scan", connectionId: adapter.connectionId, queue: topic });
    const worker = new JobWorker({
      handlers: { scan: scanHandler({ adapterFor: () => adapter }) },
      owner: "bench",
      scope: { jobIds: [job.id] },
    });
    const c1 = cpuNow();
    const s0 = performance.now();
    await worker.runOnce();
    const scanSeconds = (performance.now() - s0) / 1000;
    const scanCpu = await cpuSince(c1);
    const done = (await jobStore().get(job.id))!;
    if (done.state !== "succeeded") throw new Error(`scan ${done.state}: ${done.error}`);
    const scanned = (done.progress as { read: number }).read;
    const line = (name: string, c: Cpu, n: number) =>
      console.log(
        `  ${name.padEnd(6)} node ${String(us(c.node, n)).padStart(4)} µs (gc ${us(c.gc, n)})  postgres ${String(us(c.postgres, n)).padStart(4)} µs  (${n} letters)`,
      );
    console.log(`CPU per letter (${cpuScope()})`);
    line("tail", tailCpu, indexed);
    line("scan", scanCpu, scanned);
    if (indexed === 0 || scanned < sent) throw new Error(`${sent} sent, ${indexed} indexed, ${scanned} scanned`);
    const p99 = pct(latencies, 99);
    report({
      operation: `indexer live tail at ${RATE}/s, arrival → in its group, p99`,
      rate: { value: p99, unit: "ms" },
      cpu: { reading: tailCpu, letters: indexed, broker: "kafka" },
      note: `p50 ${pct(latencies, 50)} ms`,
    });
    report({
      operation: `scan job of the same Kafka DLT, ${scanned} letters`,
      rate: { value: scanned / scanSeconds, unit: "letters/s" },
      cpu: { reading: scanCpu, letters: scanned, broker: "kafka" },
    });
    console.log(
      `ratio tail / scan: node ${(us(tailCpu.node, indexed) / us(scanCpu.node, scanned)).toFixed(2)}, node + postgres ${((tailCpu.node + tailCpu.postgres) / indexed / ((scanCpu.node + scanCpu.postgres) / scanned)).toFixed(2)} (goal: node ≤ 1)`,
    );

    // 3. Idle DLQs.
    const calls = { describe: 0, tail: 0 };
    const stub: BrokerAdapter = {
      ...({} as BrokerAdapter),
      connectionId: "bench-idle",
      capabilities: adapter.capabilities,
      describeDlq: async (name: string) => {
        calls.describe++;
        return { name, readRisk: null } as Awaited<ReturnType<BrokerAdapter["describeDlq"]>>;
      },
      tail: {
        readAfter: () => {
          calls.tail++;
          return (async function* () {})();
        },
      },
    };
    const names = Array.from({ length: IDLE }, (_, i) => `idle.${i}.DLT`);
    await getDb().$executeRawUnsafe(
      `INSERT INTO dlq_status (connection_id, queue, queue_type, sampled_at, depth, entered_total)
       SELECT 'bench-idle', q, 'topic', now(), 5, 5 FROM unnest($1::text[]) q`,
      names,
    );
    const timed = async () => {
      Object.assign(calls, { describe: 0, tail: 0 });
      const t0 = performance.now();
      const r = await indexRound({ adapters: () => [stub], config: () => cfg, owner: "bench", summaryEverySeconds: 0 });
      return { ms: performance.now() - t0, due: r.due, ...calls };
    };
    const first = await timed(); // the first look at each: O(DLQs), once
    await timed(); // the tails that read (nothing) are looked at once more
    const idle = await timed();
    await getDb().$executeRawUnsafe(
      `UPDATE dlq_status SET depth = 6, entered_total = 6 WHERE connection_id = 'bench-idle' AND queue = ANY($1::text[])`,
      names.slice(0, 10),
    );
    const ten = await timed();
    console.log(
      `${IDLE} idle DLQs: first look ${first.ms.toFixed(0)} ms (${first.describe} broker descriptions); then a round ${idle.ms.toFixed(1)} ms, ${idle.due} due, ${idle.describe} descriptions, ${idle.tail} reads; with 10 changed ${ten.ms.toFixed(1)} ms, ${ten.due} due, ${ten.describe} descriptions, ${ten.tail} reads`,
    );
    report({
      operation: `indexer round over ${IDLE} idle DLQs`,
      rate: { value: idle.ms, unit: "ms" },
      anchor: { name: "first look", value: first.ms, unit: "ms" },
      note: `${idle.describe} descriptions, ${idle.tail} reads; 10 changed: ${ten.ms.toFixed(1)} ms`,
    });
  } finally {
    await adapter.close();
    await warm.close();
    await admin.deleteTopics({ topics: [topic, warmTopic] }).catch(() => undefined);
    await admin.disconnect();
    await closeDb();
    await closeBulkPool();
    await db.drop();
  }
}

if (process.argv[2] === "produce")
  produce(process.argv[3]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
else
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
