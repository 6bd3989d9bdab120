/**
 * Reads 100,000 persistent ~1 KB letters from a RabbitMQ DLQ through RabbitMqAdapter.stream() and
 * with a bare amqplib consumer (consume without ack, then close), in one run. Not part of CI.
 *   npm run bench:rabbitmq            (BENCH_COUNT to change the count)
 */
import amqp from "amqplib";
import { RabbitMqAdapter } from "../lib/brokers/rabbitmq/adapter";
import { testConfig } from "../lib/brokers/rabbitmq/test-kit";

const COUNT = Number(process.env.BENCH_COUNT ?? 100_000);
const URL = "amqp://guest:guest@127.0.0.1:5672";
const QUEUE = "bench.read.dlq";

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
  const adapter = new RabbitMqAdapter(testConfig({ dlqs: [{ name: QUEUE }], discover: false }));
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

async function main() {
  await seed();
  const rssBefore = process.memoryUsage().rss;
  const bareRate = await bare();
  const adapterRate = await adapterRead();
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
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
