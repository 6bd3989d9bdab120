/**
 * Reads the same 100,000 ~1 KB records of a 3-partition Kafka DLT through KafkaAdapter.stream() and
 * with a bare kafkajs consumer, and prints both rates, their ratio and each side's peak RSS.
 *   npm run bench:kafka      (Kafka running: `bash scripts/services.sh start kafka`; the handled-offset
 *                             lookups go to a throwaway database on DATABASE_URL's server; BENCH_COUNT,
 *                             BENCH_ROUNDS; smoke 3,000 records, 1 round)
 *
 * What makes the comparison fair:
 * - Same records: both sides read the whole topic seeded here, from its start offsets to the end
 *   offsets, and each checks it saw exactly BENCH_COUNT records.
 * - Same setup excluded: each side runs in its own fresh process (no JIT or heap warmed by the other
 *   side; RSS is that side's alone). Connecting the clients is outside the timing on both sides:
 *   the bare consumer connects and joins its throwaway group first (the clock starts at GROUP_JOIN),
 *   the adapter connects its admin client, its fetch cluster and Postgres first (ping + one
 *   handled-count query). Inside the timing on both sides: the per-read lookups (consumer: its
 *   committed offsets and ListOffsets; adapter: topic check, ListOffsets, handled counts) and every
 *   Fetch to the last record.
 * - The adapter does its full per-record work: header decoding (Spring binary headers), sha256 of
 *   the value, ids, positions, and the handled-offset lookup: 1% of the records are marked handled
 *   in Postgres (spread over all partitions), so every Fetch of every partition is looked up, and
 *   the run checks that exactly those letters come out marked.
 * - The bare consumer does nothing per record (eachBatch, counts messages, no commits): it is the
 *   ceiling kafkajs itself sets, with its default fetch sizes.
 * Rounds alternate bare/adapter; the ratio is of the median rates. Peak RSS is sampled every 10 ms
 * in each child from its start (module loading included) to its last record.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { mendKafkajs } from "../lib/brokers/kafka/client";
import { createTopicWithLeaders } from "../lib/brokers/kafka/topic-ready";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { bareKafkaRead } from "./bare-reads";
import { type Cpu, cpuNow, cpuSince, measureBroker, zeroCpu } from "./cpu";
import { report, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const COUNT = size("BENCH_COUNT", 100_000, 3_000);
const ROUNDS = size("BENCH_ROUNDS", 3, 1);
measureBroker("kafka");
const PARTITIONS = 3;
const HANDLED_EVERY = 100;
const BROKERS = (process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? 9092}`).split(",");
// Mended as the adapter's client is (no 1 ms timer per idle connection; docs/testing.md#node), so
// the bare side is not charged for what the adapter no longer does.
const kafka = mendKafkajs(new Kafka({ clientId: "dlq-console-bench", brokers: BROKERS, logLevel: logLevel.NOTHING }));

interface SideResult {
  side: "bare" | "adapter";
  records: number;
  handled?: number;
  seconds: number;
  /** CPU time of the process (user + system) over the same span: a check on a busy machine. */
  cpuSeconds: number;
  peakRssMb: number;
  /** CPU by process over the same span (bench/cpu.ts). */
  cpu: Cpu;
}

function rssSampler() {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  return () => {
    clearInterval(timer);
    return Math.round(Math.max(peak, process.memoryUsage.rss()) / 1048576);
  };
}

async function bare(topic: string): Promise<SideResult> {
  const stopRss = rssSampler();
  let t0 = 0;
  let c0 = process.cpuUsage();
  let byProcess = cpuNow();
  let t1 = 0;
  let cpu = { user: 0, system: 0 };
  await bareKafkaRead(kafka, topic, COUNT, {
    onJoin: () => {
      t0 = performance.now();
      c0 = process.cpuUsage();
      byProcess = cpuNow();
    },
    onDone: () => {
      t1 = performance.now();
      cpu = process.cpuUsage(c0);
    },
  });
  const byProcessCpu = await cpuSince(byProcess);
  return {
    side: "bare",
    records: COUNT,
    seconds: (t1 - t0) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb: stopRss(),
    cpu: byProcessCpu,
  };
}

async function adapterSide(topic: string, connectionId: string): Promise<SideResult> {
  const stopRss = rssSampler();
  const { KafkaAdapter } = await import("../lib/brokers/kafka/adapter");
  const { prismaHandledStore } = await import("../lib/connections/kafka-handled-store");
  const { testConfig } = await import("../lib/brokers/kafka/test-kit");
  const { closeDb } = await import("../lib/db");
  const store = prismaHandledStore();
  const adapter = new KafkaAdapter(
    testConfig({ id: connectionId, brokers: BROKERS, discover: false, dlqs: [{ name: topic }] }),
    { allManagedHeaders: MANAGED_HEADERS, handledStore: store },
  );
  // Connections first, as the consumer's connect and join are: admin client, Postgres.
  await adapter.ping();
  await store.handledCounts(connectionId, topic, [{ partition: 0, start: 0n, end: 1n }]);
  await adapter.getLetter(topic, "0-0"); // connects the fetch cluster
  if (process.env.BENCH_DEBUG)
    console.error(`adapter rss before stream(): ${Math.round(process.memoryUsage.rss() / 1048576)} MB`);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const byProcess = cpuNow();
  let n = 0;
  let handled = 0;
  for await (const l of adapter.stream(topic)) {
    n++;
    if (l.handled) handled++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const byProcessCpu = await cpuSince(byProcess);
  const peakRssMb = stopRss();
  await adapter.close();
  await closeDb();
  if (n !== COUNT) throw new Error(`adapter read ${n} records, expected ${COUNT}`);
  return {
    side: "adapter",
    records: n,
    handled,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb,
    cpu: byProcessCpu,
  };
}

async function seed(topic: string, connectionId: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  await createTopicWithLeaders(admin, { topic, numPartitions: PARTITIONS, replicationFactor: 1 });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const value = Buffer.alloc(1024, "x");
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i += 1000) {
    const messages = [];
    for (let j = i; j < Math.min(COUNT, i + 1000); j++) {
      messages.push({
        partition: j % PARTITIONS,
        key: `k-${j % 100}`,
        value,
        headers: {
          "kafka_dlt-original-topic": Buffer.from("orders"),
          "kafka_dlt-original-partition": Buffer.from([0, 0, 0, j % PARTITIONS]),
          "kafka_dlt-original-offset": Buffer.from([0, 0, 0, 0, 0, 0, (j >> 8) & 0xff, j & 0xff]),
          "kafka_dlt-exception-fqcn": Buffer.from("java.lang.IllegalStateException"),
        },
      });
    }
    await producer.send({ topic, acks: -1, messages });
  }
  const s = (performance.now() - t0) / 1000;
  await producer.disconnect();
  // 1% handled, spread over every partition: the adapter looks up every Fetch.
  const { prismaHandledStore } = await import("../lib/connections/kafka-handled-store");
  const refs = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const inPartition = Math.ceil((COUNT - p) / PARTITIONS);
    for (let o = 0; o < inPartition; o += HANDLED_EVERY) refs.push({ partition: p, offset: BigInt(o) });
  }
  await prismaHandledStore().markHandled(connectionId, topic, refs, { operationId: randomUUID(), outcome: "redriven" });
  console.log(
    `seeded ${COUNT} records in ${PARTITIONS} partitions in ${s.toFixed(1)} s; ${refs.length} marked handled`,
  );
  return refs.length;
}

function child(side: "bare" | "adapter", topic: string, connectionId: string): SideResult {
  const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1], side, topic, connectionId], {
    env: process.env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return JSON.parse(out.trim().split("\n").pop()!) as SideResult;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function main() {
  const [side, topicArg, connArg] = process.argv.slice(2);
  if (side === "bare" || side === "adapter") {
    const r = side === "bare" ? await bare(topicArg) : await adapterSide(topicArg, connArg);
    console.log(JSON.stringify(r));
    return;
  }
  // The adapter's handled-offset lookups are part of the bench: a throwaway database, which the
  // children (and their CPU readings) use through DATABASE_URL.
  const db = await createTestDatabase("dlq_bench_kafka");
  await applyMigrations({ databaseUrl: db.url });
  process.env.DATABASE_URL = db.url;
  const topic = `bench.read.${Date.now().toString(36)}.DLT`;
  const connectionId = `bench-${randomUUID().slice(0, 8)}`;
  const { getDb, closeDb } = await import("../lib/db");
  try {
    const marked = await seed(topic, connectionId);
    const results: SideResult[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const s of ["bare", "adapter"] as const) {
        const res = child(s, topic, connectionId);
        if (res.side === "adapter" && res.handled !== marked)
          throw new Error(`adapter marked ${res.handled} letters handled, expected ${marked}`);
        results.push(res);
        console.log(
          `round ${r + 1} ${s.padEnd(7)} ${Math.round(res.records / res.seconds)
            .toString()
            .padStart(
              7,
            )} records/s  ${res.seconds.toFixed(2)} s (CPU ${res.cpuSeconds.toFixed(2)} s)  peak RSS ${res.peakRssMb} MB`,
        );
      }
    }
    const rate = (s: SideResult["side"]) =>
      median(results.filter((x) => x.side === s).map((x) => x.records / x.seconds));
    const rss = (s: SideResult["side"]) => Math.max(...results.filter((x) => x.side === s).map((x) => x.peakRssMb));
    const admin = kafka.admin();
    await admin.connect();
    const left = (await admin.fetchTopicOffsets(topic)).reduce((t, p) => t + Number(p.high) - Number(p.low), 0);
    await admin.disconnect();
    console.log(
      `bare kafkajs consumer (group, eachBatch, no per-record work): ${Math.round(rate("bare"))} records/s (median of ${ROUNDS}; from GROUP_JOIN to the last record)`,
    );
    console.log(
      `adapter.stream() (no group; headers, sha256, ids, handled lookups):  ${Math.round(rate("adapter"))} records/s (median of ${ROUNDS}; from stream() to the last letter)`,
    );
    console.log(`ratio adapter/bare: ${(rate("adapter") / rate("bare")).toFixed(2)} (goal >= 0.8)`);
    console.log(
      `peak RSS: adapter ${rss("adapter")} MB (goal < 300 MB), bare consumer ${rss("bare")} MB (each in its own process)`,
    );
    console.log(`records still in the topic after all reads: ${left} of ${COUNT}`);
    const cpuOf = (s: SideResult["side"]) => {
      const sum = zeroCpu();
      for (const x of results.filter((r) => r.side === s))
        for (const k of Object.keys(sum) as Array<keyof Cpu>) sum[k] += x.cpu[k];
      return { reading: sum, letters: COUNT * ROUNDS, broker: "kafka" };
    };
    report({
      operation: `Kafka read, bare kafkajs consumer, ${COUNT} records`,
      rate: { value: rate("bare"), unit: "letters/s" },
      cpu: cpuOf("bare"),
    });
    report({
      operation: `Kafka read, adapter.stream(), ${COUNT} records`,
      rate: { value: rate("adapter"), unit: "letters/s" },
      anchor: { name: "bare kafkajs consumer", value: rate("bare"), unit: "letters/s" },
      cpu: cpuOf("adapter"),
    });
  } finally {
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
    await getDb()
      .kafkaHandledOffset.deleteMany({ where: { connectionId } })
      .catch(() => undefined);
    await closeDb();
    await db.drop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
