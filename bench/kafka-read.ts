/**
 * Reads 100,000 ~1 KB records of a Kafka DLT through KafkaAdapter.stream() and with a bare kafkajs
 * consumer (throwaway group, eachBatch, no commits), in one run. Not part of CI.
 *   npm run bench:kafka            (BENCH_COUNT to change the count; DATABASE_URL to include handled-offset lookups)
 */
import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";
import { KafkaAdapter } from "../lib/brokers/kafka/adapter";
import { prismaHandledStore } from "../lib/brokers/kafka/handled-store";
import { KAFKA_BROKERS, testConfig } from "../lib/brokers/kafka/test-kit";
import { closeDb } from "../lib/db";

const COUNT = Number(process.env.BENCH_COUNT ?? 100_000);
const PARTITIONS = 3;
const TOPIC = `bench.read.${Date.now().toString(36)}.DLT`;
const kafka = new Kafka({ clientId: "dlq-console-bench", brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

async function seed() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const value = Buffer.alloc(1024, "x");
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i += 1000) {
    const messages = [];
    for (let j = i; j < Math.min(COUNT, i + 1000); j++) {
      messages.push({ partition: j % PARTITIONS, key: `k-${j % 100}`, value, headers: { "kafka_dlt-original-offset": Buffer.from([0, 0, 0, 0, 0, 0, 0, j & 0xff]), "kafka_dlt-exception-fqcn": Buffer.from("java.lang.IllegalStateException") } });
    }
    await producer.send({ topic: TOPIC, acks: -1, messages });
  }
  const s = (performance.now() - t0) / 1000;
  console.log(`seeded ${COUNT} records in ${PARTITIONS} partitions in ${s.toFixed(1)} s (${Math.round(COUNT / s)}/s)`);
  await producer.disconnect();
}

async function bare(): Promise<number> {
  const groupId = `bench-bare-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  let n = 0;
  let t0 = 0;
  await new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (!t0) t0 = performance.now();
        n += batch.messages.length;
        if (n >= COUNT) resolve();
      },
    });
  });
  const s = (performance.now() - t0) / 1000;
  await consumer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([groupId]).catch(() => undefined);
  await admin.disconnect();
  return n / s;
}

async function adapterRead(): Promise<number> {
  const store = process.env.DATABASE_URL ? prismaHandledStore() : null;
  const adapter = new KafkaAdapter(testConfig({ discover: false, dlqs: [{ name: TOPIC }] }), { handledStore: store });
  const t0 = performance.now();
  let n = 0;
  for await (const l of adapter.stream(TOPIC)) {
    n++;
    void l;
  }
  const s = (performance.now() - t0) / 1000;
  await adapter.close();
  if (n !== COUNT) throw new Error(`adapter read ${n} records, expected ${COUNT}`);
  return n / s;
}

async function main() {
  await seed();
  const rssBefore = process.memoryUsage().rss;
  const bareRate = await bare();
  const adapterRate = await adapterRead();
  const admin = kafka.admin();
  await admin.connect();
  const left = (await admin.fetchTopicOffsets(TOPIC)).reduce((t, p) => t + Number(p.high) - Number(p.low), 0);
  await admin.deleteTopics({ topics: [TOPIC] });
  await admin.disconnect();
  await closeDb();
  clearInterval(sampler);
  console.log(`bare kafkajs consumer (group, eachBatch): ${Math.round(bareRate)} records/s (timed from the first batch: excludes the group join)`);
  console.log(`adapter.stream():       ${Math.round(adapterRate)} records/s (group-less fetch, headers decoded, sha256, handled lookups: ${process.env.DATABASE_URL ? "on" : "off"})`);
  console.log(`ratio adapter/bare:     ${(adapterRate / bareRate).toFixed(2)}`);
  console.log(`peak RSS:               ${Math.round(peakRss / 1048576)} MB (${Math.round(rssBefore / 1048576)} MB after seeding)`);
  console.log(`records still in the topic after both reads: ${left} of ${COUNT}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
