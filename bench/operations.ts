/**
 * The operations sampler's cost.
 *   npm run bench:operations      (BENCH_RABBIT_QUEUES, BENCH_SQS_QUEUES, BENCH_OVERVIEW_DLQS to change the sizes;
 *                                  smoke 20, 12 and 20)
 *
 * 1. One inspect round over 1,000 RabbitMQ DLQs and 200 SQS DLQs (ElasticMQ): wall time and broker
 *    calls, against a round over 10 of each in the same run. Goal: the RabbitMQ calls per round do
 *    not grow with the number of queues (a constant number of management requests per broker).
 * 2. The overview query over 14 days of samples for 1,000 DLQs (about 650 rows each, as the
 *    downsampling keeps them), against `SELECT count(*)` of the samples table in the same run.
 *    Goal: under 100 ms.
 */
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { BrokerAdapter } from "../lib/brokers/contract/adapter";
import { applyMigrations } from "../scripts/lib/migrations";
import { createTestDatabase } from "../scripts/lib/test-database";
import { report, size } from "./report";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";

const RABBIT = size("BENCH_RABBIT_QUEUES", 1000, 20);
const SQS = size("BENCH_SQS_QUEUES", 200, 12);
const OVERVIEW_DLQS = size("BENCH_OVERVIEW_DLQS", 1000, 20);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

async function inspectRounds() {
  const { RabbitMqAdapter } = await import("../lib/brokers/rabbitmq/adapter");
  const { testConfig: rabbitConfig, AMQP_URL } = await import("../lib/brokers/rabbitmq/test-kit");
  const { SqsAdapter } = await import("../lib/brokers/sqs/adapter");
  const { testConfig: sqsConfig, ELASTICMQ_ENDPOINT } = await import("../lib/brokers/sqs/test-kit");
  const tag = randomUUID().slice(0, 6);
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const rabbitNames = Array.from({ length: RABBIT }, (_, i) => `bench-ops-${tag}-${i}.dlq`);
  const sqs = new SQSClient({
    region: "us-east-1",
    endpoint: ELASTICMQ_ENDPOINT,
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
  });
  const sqsUrls: string[] = [];
  try {
    for (const n of rabbitNames)
      await ch.assertQueue(n, { durable: false, arguments: { "x-message-ttl": 86_400_000 } });
    // Two prefixes: the 10-queue round reads only its own queues (SQS lists and reads every queue under the prefix).
    for (let i = 0; i < 10; i++)
      sqsUrls.push(
        (await sqs.send(new CreateQueueCommand({ QueueName: `bench-ops-${tag}-small-${i}-dlq` }))).QueueUrl!,
      );
    for (let i = 0; i < SQS; i++)
      sqsUrls.push((await sqs.send(new CreateQueueCommand({ QueueName: `bench-ops-${tag}-big-${i}-dlq` }))).QueueUrl!);
    const measure = async (label: string, adapter: BrokerAdapter) => {
      await adapter.inspect({ minRetentionMs: 7 * 86400_000 }); // warm-up (connections, version)
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await timed(() => adapter.inspect({ minRetentionMs: 7 * 86400_000 })));
      const ms = median(runs.map((r) => r.ms));
      const last = runs.at(-1)!.value;
      console.log(
        `${label.padEnd(36)} ${String(last.dlqs.length).padStart(5)} DLQs  ${ms.toFixed(0).padStart(6)} ms  ${String(last.calls).padStart(5)} calls`,
      );
      await adapter.close();
      return { ms, calls: last.calls };
    };
    const rabbitSmall = await measure(
      "RabbitMQ, 10 DLQs",
      new RabbitMqAdapter(
        rabbitConfig({
          id: `bench-r10-${tag}`,
          discover: false,
          dlqs: rabbitNames.slice(0, 10).map((name) => ({ name })),
        }),
        { allManagedHeaders: MANAGED_HEADERS },
      ),
    );
    const rabbitBig = await measure(
      `RabbitMQ, ${RABBIT} DLQs`,
      new RabbitMqAdapter(
        rabbitConfig({ id: `bench-r-${tag}`, discover: false, dlqs: rabbitNames.map((name) => ({ name })) }),
        { allManagedHeaders: MANAGED_HEADERS },
      ),
    );
    const sqsNames = sqsUrls.map((u) => u.split("/").pop()!);
    const sqsRound = (label: string, prefix: string) =>
      measure(
        label,
        new SqsAdapter(
          sqsConfig(ELASTICMQ_ENDPOINT, {
            id: `bench-${prefix}-${tag}`,
            queueNamePrefix: `bench-ops-${tag}-${prefix}-`,
            discover: false,
            dlqs: sqsNames.filter((n) => n.includes(`-${prefix}-`)).map((name) => ({ name })),
          }),
          { allManagedHeaders: MANAGED_HEADERS },
        ),
      );
    const sqsSmall = await sqsRound("SQS (ElasticMQ), 10 DLQs", "small");
    const sqsBig = await sqsRound(`SQS (ElasticMQ), ${SQS} DLQs`, "big");
    console.log(
      `RabbitMQ calls per round: ${rabbitSmall.calls} for 10 DLQs, ${rabbitBig.calls} for ${RABBIT}: ${rabbitBig.calls === rabbitSmall.calls ? "constant (goal met)" : "GROWS (goal not met)"}`,
    );
    console.log(`RabbitMQ time per round: ${(rabbitBig.ms / rabbitSmall.ms).toFixed(1)}x the 10-DLQ round`);
    report({
      operation: `inspect round, RabbitMQ, ${RABBIT} DLQs`,
      rate: { value: rabbitBig.ms, unit: "ms" },
      anchor: { name: "10 DLQs", value: rabbitSmall.ms, unit: "ms" },
      note: `${rabbitBig.calls} calls (10 DLQs: ${rabbitSmall.calls})`,
    });
    report({
      operation: `inspect round, SQS (ElasticMQ), ${SQS} DLQs`,
      rate: { value: sqsBig.ms, unit: "ms" },
      anchor: { name: "10 DLQs", value: sqsSmall.ms, unit: "ms" },
      note: `${sqsBig.calls} calls (10 DLQs: ${sqsSmall.calls})`,
    });
    console.log(
      `SQS: ${sqsSmall.calls} calls for 10 DLQs, ${sqsBig.calls} for ${SQS} (one list, one attribute read per queue: the floor on SQS); time ${(sqsBig.ms / sqsSmall.ms).toFixed(1)}x`,
    );
  } finally {
    for (const n of rabbitNames) await ch.deleteQueue(n).catch(() => undefined);
    await conn.close().catch(() => undefined);
    for (const u of sqsUrls) await sqs.send(new DeleteQueueCommand({ QueueUrl: u })).catch(() => undefined);
  }
}

async function overviewQuery() {
  const db = await createTestDatabase("dlq_bench_operations");
  process.env.DATABASE_URL = db.url;
  await applyMigrations({ databaseUrl: db.url });
  const { getDb, closeDb } = await import("../lib/db");
  const { overviewRows } = await import("../lib/operations/queries");
  const { ownerMatcher } = await import("../lib/operations/owners");
  const prisma = getDb();
  try {
    const t0 = performance.now();
    // What 14 days of 30 s rounds leave after downsampling: 60 s buckets for 2 h, 900 s for 2 days, 3600 s for 14 days.
    await prisma.$executeRawUnsafe(`
      INSERT INTO dlq_samples (connection_id, queue, resolution, bucket_at, depth, depth_max, inflow, samples)
      SELECT 'bench', 'dlq-' || d, r.s, to_timestamp(floor(extract(epoch FROM now()) / r.s) * r.s) - (k * r.s * interval '1 second'),
             (d * 7 + k) % 5000, (d * 7 + k) % 5000 + 3, k % 11, r.s / 30
        FROM generate_series(1, ${OVERVIEW_DLQS}) d
        CROSS JOIN (VALUES (60, 120), (900, 192), (3600, 336)) AS r(s, n)
        CROSS JOIN LATERAL generate_series(0, r.n - 1) k`);
    await prisma.$executeRawUnsafe(`
      INSERT INTO dlq_status (connection_id, queue, queue_type, sampled_at, depth, inflow_per_min, oldest_at, oldest_source, retention_ms, deadline_at, trend)
      SELECT 'bench', 'dlq-' || d, 'classic', now(), d % 5000, (d % 7)::float8, now() - interval '3 hours', 'broker', 86400000, now() + interval '21 hours',
             (SELECT jsonb_agg(jsonb_build_object('t', (floor(extract(epoch FROM now()) / 60) * 60 - k * 60)::bigint, 'd', (d * 7 + k) % 5000) ORDER BY k DESC)
                FROM generate_series(0, 59) k)
        FROM generate_series(1, ${OVERVIEW_DLQS}) d`);
    await prisma.$executeRawUnsafe(`
      INSERT INTO dlq_findings (id, connection_id, queue, code, severity, object, why, fix, first_seen_at, last_seen_at)
      SELECT gen_random_uuid(), 'bench', 'dlq-' || d, 'bench.fault', 'warning', 'queue dlq-' || d, 'w', 'f', now(), now()
        FROM generate_series(1, ${OVERVIEW_DLQS} / 10) d`);
    await prisma.$executeRawUnsafe("VACUUM ANALYZE dlq_samples");
    await prisma.$executeRawUnsafe("VACUUM ANALYZE dlq_status");
    const [{ n }] = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>("SELECT count(*) AS n FROM dlq_samples");
    console.log(`seeded ${n} samples for ${OVERVIEW_DLQS} DLQs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const owners = ownerMatcher([
      { connection: null, queue: "dlq-1*", team: "Bench", contact: "#bench", source: "config" },
    ]);
    const baselineRuns: number[] = [];
    const overviewRuns: number[] = [];
    for (let i = 0; i < 7; i++) {
      baselineRuns.push((await timed(() => prisma.$queryRawUnsafe("SELECT count(*) FROM dlq_samples"))).ms);
      overviewRuns.push((await timed(() => overviewRows(owners))).ms);
    }
    const rows = await overviewRows(owners);
    const base = median(baselineRuns);
    const ms = median(overviewRuns);
    console.log(`baseline SELECT count(*) of ${n} samples: ${base.toFixed(1)} ms (median of 7)`);
    if (rows.length !== OVERVIEW_DLQS) throw new Error(`overview of ${rows.length} DLQs, expected ${OVERVIEW_DLQS}`);
    report({
      operation: `overview query, ${OVERVIEW_DLQS} DLQs, 14 days of samples`,
      rate: { value: ms, unit: "ms" },
      anchor: { name: "count(*) of the samples", value: base, unit: "ms" },
    });
    console.log(
      `overview of ${rows.length} DLQs: ${ms.toFixed(1)} ms (median of 7), ${(ms / base).toFixed(2)}x the baseline: ${ms < 100 ? "under 100 ms (goal met)" : "OVER 100 ms (goal not met)"}`,
    );
  } finally {
    await closeDb();
    await db.drop();
  }
}

async function main() {
  await inspectRounds();
  await overviewQuery();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
