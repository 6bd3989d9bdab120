/**
 * Reads 10,000 ~1 KB letters from an SQS DLQ on ElasticMQ through SqsAdapter.stream() and with a
 * bare ReceiveMessage loop (same concurrency, same visibility timeout, then the same release), in
 * one run.   npm run bench:sqs   (BENCH_COUNT, SQS_ENDPOINT to change; smoke 500 letters)
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SendMessageBatchCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { SqsAdapter } from "../lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, testConfig } from "../lib/brokers/sqs/test-kit";
import { bareSqsRead } from "./bare-reads";
import { type Cpu, cpuNow, cpuSince, measureBroker, perLetter } from "./cpu";
import { report, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const COUNT = size("BENCH_COUNT", 10_000, 500);
const ENDPOINT = process.env.SQS_ENDPOINT ?? ELASTICMQ_ENDPOINT;
/** Unique per run: two benches on one queue would hide each other's letters. */
const DLQ = `bench-read-${process.pid}-dlq`;
const SOURCE = `bench-read-${process.pid}`;
measureBroker("elasticmq");
const CONCURRENCY = 4;

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
const sqs = new SQSClient({
  endpoint: ENDPOINT,
  region: "us-east-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
  maxAttempts: 2,
});

async function fresh(name: string, attributes: Record<string, string> = {}) {
  const old = await sqs.send(new GetQueueUrlCommand({ QueueName: name })).catch(() => null);
  if (old?.QueueUrl) await sqs.send(new DeleteQueueCommand({ QueueUrl: old.QueueUrl }));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes!
    .QueueArn!;
  return { url: QueueUrl!, arn };
}

/** The DLQ is named by a source's redrive policy (so the adapter counts it as one); letters are sent straight to it for speed. */
async function seed(): Promise<string> {
  const dlq = await fresh(DLQ);
  await fresh(SOURCE, { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 1 }) });
  const body = "x".repeat(1024);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < COUNT) {
        const start = next;
        next += 10;
        const n = Math.min(10, COUNT - start);
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: dlq.url,
            Entries: Array.from({ length: n }, (_, i) => ({
              Id: String(i),
              MessageBody: body,
              MessageAttributes: { seq: { DataType: "Number", StringValue: String(start + i) } },
            })),
          }),
        );
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  console.log(`seeded ${COUNT} letters in ${s.toFixed(1)} s (${Math.round(COUNT / s)}/s)`);
  return dlq.url;
}

/** The bare loop, releasing in order as a plain client would (one ChangeMessageVisibilityBatch at a time). */
const bare = (url: string) => bareSqsRead(sqs, url, COUNT, { receivers: CONCURRENCY, waitSeconds: 1, releasers: 1 });

async function viaAdapter(): Promise<number> {
  const adapter = new SqsAdapter(testConfig(ENDPOINT, { queueNamePrefix: `bench-read-${process.pid}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    receiveConcurrency: CONCURRENCY,
  });
  const t0 = performance.now();
  let n = 0;
  for await (const l of adapter.stream(DLQ)) {
    if (l.bodySize !== 1024) throw new Error("unexpected body");
    n++;
  }
  const s = (performance.now() - t0) / 1000;
  await adapter.close();
  if (n !== COUNT) throw new Error(`adapter read ${n} of ${COUNT}`);
  return s;
}

async function main() {
  const url = await seed();
  const waitVisible = async () => {
    for (let i = 0; i < 100; i++) {
      const a = (
        await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
        )
      ).Attributes!;
      if (Number(a.ApproximateNumberOfMessages) === COUNT) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("letters did not all become visible again");
  };
  const rssBefore = process.memoryUsage().rss;
  let c0 = cpuNow();
  const tBare = await bare(url);
  const bareCpu: Cpu = await cpuSince(c0);
  await waitVisible();
  c0 = cpuNow();
  const tAdapter = await viaAdapter();
  const adapterCpu: Cpu = await cpuSince(c0);
  await waitVisible();
  clearInterval(sampler);
  const rBare = COUNT / tBare;
  const rAdapter = COUNT / tAdapter;
  console.log(`bare ReceiveMessage loop (+ release): ${COUNT} in ${tBare.toFixed(2)} s = ${Math.round(rBare)}/s`);
  console.log(`SqsAdapter.stream():                ${COUNT} in ${tAdapter.toFixed(2)} s = ${Math.round(rAdapter)}/s`);
  console.log(`ratio adapter/bare: ${(rAdapter / rBare).toFixed(2)}`);
  console.log(`peak RSS ${Math.round(peakRss / 1048576)} MB (before reads ${Math.round(rssBefore / 1048576)} MB)`);
  console.log(`CPU, bare:    ${perLetter(bareCpu, COUNT)}`);
  console.log(`CPU, adapter: ${perLetter(adapterCpu, COUNT)}`);
  report({
    operation: `SQS read (ElasticMQ), bare ReceiveMessage loop, ${COUNT} letters`,
    rate: { value: rBare, unit: "letters/s" },
    cpu: { reading: bareCpu, letters: COUNT, broker: "elasticmq" },
  });
  report({
    operation: `SQS read (ElasticMQ), adapter.stream(), ${COUNT} letters`,
    rate: { value: rAdapter, unit: "letters/s" },
    anchor: { name: "bare ReceiveMessage loop", value: rBare, unit: "letters/s" },
    cpu: { reading: adapterCpu, letters: COUNT, broker: "elasticmq" },
  });
  for (const q of [DLQ, SOURCE]) {
    const u = await sqs.send(new GetQueueUrlCommand({ QueueName: q })).catch(() => null);
    if (u?.QueueUrl) await sqs.send(new DeleteQueueCommand({ QueueUrl: u.QueueUrl }));
  }
  sqs.destroy();
}

main().catch((e) => {
  console.error(`bench failed: ${(e as Error).message}`);
  process.exit(1);
});
