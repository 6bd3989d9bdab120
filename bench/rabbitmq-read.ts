/**
 * Reads 100,000 persistent ~1 KB letters from a RabbitMQ DLQ through RabbitMqAdapter.stream() and
 * with a bare amqplib consumer (consume without ack, then close), in one run.
 *   npm run bench:rabbitmq            (BENCH_COUNT to change the count; smoke 2,000)
 */
import amqp from "amqplib";
import { RabbitMqAdapter } from "../lib/brokers/rabbitmq/adapter";
import { AMQP_URL, testConfig } from "../lib/brokers/rabbitmq/test-kit";
import { type Cpu, cpuNow, cpuSince, perLetter } from "./cpu";
import { report, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const COUNT = size("BENCH_COUNT", 100_000, 2_000);
/** The machine's RabbitMQ, or another local node (DLQ_TEST_AMQP_PORT, see test-kit), the same one the adapter reads. */
const URL = AMQP_URL;
/** Unique per run: two benches on one queue would steal each other's letters. */
const QUEUE = `bench.read.dlq.${process.pid}`;

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

async function seed() {
  const conn = await amqp.connect(URL);
  const ch = await conn.createConfirmChannel();
  await ch.deleteQueue(QUEUE);
  await ch.assertQueue(QUEUE, { durable: true });
  const body = Buffer.alloc(1024, "x");
  const t0 = performance.now();
  for (let i = 0; i < COUNT; i += 1000) {
    for (let j = i; j < Math.min(COUNT, i + 1000); j++)
      ch.sendToQueue(QUEUE, body, { persistent: true, headers: { "x-seq": j } });
    await ch.waitForConfirms();
  }
  const s = (performance.now() - t0) / 1000;
  console.log(`seeded ${COUNT} letters in ${s.toFixed(1)} s (${Math.round(COUNT / s)}/s)`);
  await conn.close();
}

async function bare(): Promise<number> {
  const conn = await amqp.connect(URL);
  const ch = await conn.createChannel();
  await ch.prefetch(0);
  const t0 = performance.now();
  let n = 0;
  await new Promise<void>((resolve) => {
    void ch.consume(QUEUE, (m) => {
      if (m && ++n === COUNT) resolve();
    });
  });
  const s = (performance.now() - t0) / 1000;
  await ch.close();
  await conn.close();
  return n / s;
}

async function adapterRead(): Promise<number> {
  // A busy broker may pause longer than the default second before a letter of a large queue: the
  // read must go to the end (it ends at the count anyway), not stop as an operator's read would.
  const adapter = new RabbitMqAdapter(testConfig({ dlqs: [{ name: QUEUE }], discover: false }), {
    allManagedHeaders: MANAGED_HEADERS,
    idleMs: 30_000,
  });
  const t0 = performance.now();
  let n = 0;
  let bytes = 0;
  for await (const l of adapter.stream(QUEUE)) {
    n++;
    bytes += l.bodySize;
  }
  const s = (performance.now() - t0) / 1000;
  await adapter.close();
  if (n !== COUNT) throw new Error(`adapter read ${n} letters, expected ${COUNT}`);
  void bytes;
  return n / s;
}

/**
 * Until every letter is ready again: the bare read's unacked letters go back to the queue when its
 * channel closes, and on a busy broker 100,000 take seconds; the adapter reads what is ready, so
 * it would start on a queue still filling (it read 790 of 100,000 so at load average 12).
 */
async function allReady() {
  const conn = await amqp.connect(URL);
  const ch = await conn.createChannel();
  try {
    for (let i = 0; (await ch.checkQueue(QUEUE)).messageCount < COUNT; i++) {
      if (i > 1200) throw new Error("the bare read's letters did not come back to the queue within 2 minutes");
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await conn.close();
  }
}

async function main() {
  await seed();
  const rssBefore = process.memoryUsage().rss;
  let c0 = cpuNow();
  const bareRate = await bare();
  const bareCpu: Cpu = await cpuSince(c0);
  await allReady();
  c0 = cpuNow();
  const adapterRate = await adapterRead();
  const adapterCpu: Cpu = await cpuSince(c0);
  const conn = await amqp.connect(URL);
  const ch = await conn.createChannel();
  const left = (await ch.checkQueue(QUEUE)).messageCount;
  await ch.deleteQueue(QUEUE);
  await conn.close();
  clearInterval(sampler);
  console.log(`bare amqplib consumer: ${Math.round(bareRate)} letters/s`);
  console.log(`adapter.stream():      ${Math.round(adapterRate)} letters/s (parses headers, sha256, ids)`);
  console.log(`ratio adapter/bare:    ${(adapterRate / bareRate).toFixed(2)} (goal >= 0.8)`);
  console.log(
    `peak RSS:              ${Math.round(peakRss / 1048576)} MB (goal < 300 MB; ${Math.round(rssBefore / 1048576)} MB after seeding)`,
  );
  console.log(`letters still in the queue after both reads: ${left} of ${COUNT}`);
  console.log(`CPU, bare:    ${perLetter(bareCpu, COUNT)}`);
  console.log(`CPU, adapter: ${perLetter(adapterCpu, COUNT)}`);
  if (left !== COUNT) throw new Error(`${COUNT - left} letters left the queue: a read must leave them`);
  const bareRow = { name: "bare amqplib consume", value: bareRate, unit: "letters/s" as const };
  report({
    operation: `RabbitMQ read, bare amqplib consume, ${COUNT} letters`,
    rate: { value: bareRate, unit: "letters/s" },
    cpu: { reading: bareCpu, letters: COUNT, broker: "rabbitmq" },
  });
  report({
    operation: `RabbitMQ read, adapter.stream(), ${COUNT} letters`,
    rate: { value: adapterRate, unit: "letters/s" },
    anchor: bareRow,
    cpu: { reading: adapterCpu, letters: COUNT, broker: "rabbitmq" },
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
