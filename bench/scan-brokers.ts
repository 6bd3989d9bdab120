/**
 * The brokers bench/triage-scan.ts scans (BENCH_BROKER=rabbitmq|kafka|sqs): for each, how its DLQ is
 * seeded with the same ~1 KB letters carrying the same failure (exception class, message, stack trace,
 * app version in the broker's own convention), how the bare client reads the whole DLQ (the anchor,
 * measured in the same run), and the console's adapter of that DLQ (for the stream phase and the
 * scan's own process).
 *
 * - RabbitMQ: a durable queue; bare amqplib consume-without-ack in windows, as the adapter's reader.
 * - Kafka: a 3-partition dead-letter topic (`….DLT`) of Spring Kafka's DeadLetterPublishingRecoverer
 *   (`kafka_dlt-*` headers, binary original partition and offset); bare kafkajs consumer in a group of
 *   its own, eachBatch, no commits, from GROUP_JOIN to the last record (kafkajs's own fetch sizes).
 * - SQS: an ElasticMQ queue named by a source queue's redrive policy, letters with message
 *   attributes; bare ReceiveMessage loop with what the adapter's stream uses (4 receives at once, 10
 *   letters each, the connection's 30 s visibility timeout, 2 s long poll, every attribute), then the
 *   same release (ChangeMessageVisibilityBatch to 0), timed to the last release like the stream.
 */
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import type { BrokerAdapter } from "../lib/brokers/contract/adapter";
import { MANAGED_HEADERS } from "../lib/connections/managed-headers";
import type { Broker } from "./cpu";

export type ScanBrokerName = "rabbitmq" | "kafka" | "sqs";
export const SCAN_BROKERS: readonly ScanBrokerName[] = ["rabbitmq", "kafka", "sqs"];

export interface ScanBroker {
  name: ScanBrokerName;
  /** For operations' names: "RabbitMQ", "Kafka", "SQS (ElasticMQ)". */
  label: string;
  /** Whose server process bench/cpu.ts counts as the broker. */
  cpu: Broker;
  /** The bare read's name in the table. */
  bareName: string;
  /** The DLQ (queue or topic) name. */
  queue: string;
  /** Fills the DLQ with `count` letters (or keeps it when `keep` and it holds them already). */
  seed(count: number, keep: boolean): Promise<void>;
  /** Reads every letter once with the bare client; returns letters/s. `restart` restarts the phase's clock and CPU reading (Kafka: at GROUP_JOIN). */
  bare(count: number, restart: () => void): Promise<number>;
  /** The console's adapter of this DLQ, as the worker makes it (Kafka: with the handled-offset store of DATABASE_URL). */
  adapter(connectionId: string, opts?: { idleMs?: number }): Promise<BrokerAdapter>;
  /** Waits after a read until the DLQ holds every letter again for the next one (SQS: visible again). */
  settle(count: number): Promise<void>;
  drop(): Promise<void>;
}

export function scanBroker(name: string, queue?: string): ScanBroker {
  switch (name) {
    case "rabbitmq":
      return rabbitmq(queue ?? `bench.triage.dlq.${process.pid}`);
    case "kafka":
      return kafka(queue ?? `bench.triage.${process.pid}.DLT`);
    case "sqs":
      return sqs(queue ?? `bench-triage-${process.pid}-dlq`);
    default:
      throw new Error(`BENCH_BROKER=${name}: one of ${SCAN_BROKERS.join(", ")}`);
  }
}

/** The letters' failure: four exception classes in turn, each message unique to its letter (bench/scan-path.ts too). */
export const CLASSES = [
  ["java.net.SocketTimeoutException", (i: number) => `Read timed out after ${3000 + (i % 7)} ms calling order ${i}`],
  ["com.acme.ValidationException", (_i: number) => `Field 'email' is invalid for customer ${randomUUID()}`],
  [
    "java.lang.NullPointerException",
    (i: number) => `Cannot invoke "String.length()" because "name" is null at record ${i}`,
  ],
  [
    "org.postgresql.util.PSQLException",
    (i: number) =>
      `ERROR: duplicate key value violates unique constraint "orders_pkey" Detail: Key (id)=(${i}) already exists.`,
  ],
] as const;
function failure(j: number) {
  const [cls, msg] = CLASSES[j % CLASSES.length];
  const message = msg(j);
  return {
    cls,
    message,
    stack: `${cls}: ${message}\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1662)`,
    version: "orders-2.3.1",
  };
}

// ---------------------------------------------------------------------------------------------- RabbitMQ

function rabbitmq(queue: string): ScanBroker {
  const url = async () => (await import("../lib/brokers/rabbitmq/test-kit")).AMQP_URL;
  return {
    name: "rabbitmq",
    label: "RabbitMQ",
    cpu: "rabbitmq",
    bareName: "bare amqplib read",
    queue,
    async seed(count, keep) {
      const conn = await amqp.connect(await url());
      const ch = await conn.createConfirmChannel();
      if (keep) {
        const q = await ch.assertQueue(queue, { durable: true });
        if (q.messageCount === count) {
          console.log(`${queue} holds ${count} letters already: not seeded again`);
          await conn.close();
          return;
        }
      }
      await ch.deleteQueue(queue);
      await ch.assertQueue(queue, { durable: true });
      const body = Buffer.alloc(1024, "x");
      for (let i = 0; i < count; i += 1000) {
        for (let j = i; j < Math.min(count, i + 1000); j++) {
          const f = failure(j);
          ch.sendToQueue(queue, body, {
            persistent: true,
            messageId: `bench-${j}`,
            headers: {
              "x-exception-class": f.cls,
              "x-exception-message": f.message,
              "x-exception-stacktrace": f.stack,
              "x-app-version": f.version,
            },
          });
        }
        await ch.waitForConfirms();
      }
      await conn.close();
    },
    /**
     * Consume-without-ack in windows of at most WINDOW letters (prefetch W, take W, cancel, next
     * consumer), as the adapter's reader does, so the broker never pushes the whole queue at once and
     * memory stays bounded (prefetch 0 buffered every letter: 619 MB peak RSS).
     */
    async bare(count) {
      const WINDOW = 5000;
      const conn = await amqp.connect(await url());
      const ch = await conn.createChannel();
      const t0 = performance.now();
      let n = 0;
      while (n < count) {
        const want = Math.min(WINDOW, count - n);
        await ch.prefetch(want, false);
        let got = 0;
        let done!: () => void;
        const windowDone = new Promise<void>((resolve) => (done = resolve));
        const ok = await ch.consume(queue, (m) => {
          if (m && ++got === want) done();
        });
        await windowDone;
        await ch.cancel(ok.consumerTag);
        n += got;
      }
      const s = (performance.now() - t0) / 1000;
      await ch.close();
      await conn.close();
      return n / s;
    },
    async adapter(connectionId, opts = {}) {
      const { RabbitMqAdapter } = await import("../lib/brokers/rabbitmq/adapter");
      const { testConfig } = await import("../lib/brokers/rabbitmq/test-kit");
      return new RabbitMqAdapter(testConfig({ id: connectionId, dlqs: [{ name: queue }], discover: false }), {
        allManagedHeaders: MANAGED_HEADERS,
        // The console's default is 1 s: on a loaded machine a deep queue's next window can take longer,
        // and the read then ends short (reported as a shortfall, and the bench throws).
        ...(opts.idleMs ? { idleMs: opts.idleMs } : {}),
        ...(process.env.BENCH_READ_BUFFER ? { readBufferBytes: Number(process.env.BENCH_READ_BUFFER) } : {}),
      });
    },
    async settle() {},
    async drop() {
      const conn = await amqp.connect(await url());
      const ch = await conn.createChannel();
      await ch.deleteQueue(queue);
      await conn.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------- Kafka

const PARTITIONS = 3;
function kafka(topic: string): ScanBroker {
  const brokers = (process.env.KAFKA_BROKERS ?? `127.0.0.1:${process.env.KAFKA_PORT ?? 9092}`).split(",");
  const client = async () => {
    const { Kafka, logLevel } = await import("kafkajs");
    const { mendKafkajs } = await import("../lib/brokers/kafka/client");
    // Mended as the console's clients are (no 1 ms timer per idle connection): the bare read is
    // then the best kafkajs can do, not a read that also spins (docs/testing.md#node).
    return mendKafkajs(new Kafka({ clientId: "dlq-console-bench", brokers, logLevel: logLevel.NOTHING }));
  };
  const depth = async () => {
    const admin = (await client()).admin();
    await admin.connect();
    try {
      return (await admin.fetchTopicOffsets(topic)).reduce((t, p) => t + Number(p.high) - Number(p.low), 0);
    } catch {
      return -1;
    } finally {
      await admin.disconnect();
    }
  };
  const int32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const int64 = (n: number) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(n));
    return b;
  };
  return {
    name: "kafka",
    label: "Kafka",
    cpu: "kafka",
    bareName: "bare kafkajs consumer",
    queue: topic,
    async seed(count, keep) {
      if (keep && (await depth()) === count) {
        console.log(`${topic} holds ${count} records already: not seeded again`);
        return;
      }
      const k = await client();
      const admin = k.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      const { createTopicWithLeaders } = await import("../lib/brokers/kafka/topic-ready");
      await createTopicWithLeaders(admin, { topic, numPartitions: PARTITIONS, replicationFactor: 1 });
      await admin.disconnect();
      const producer = k.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const value = Buffer.alloc(1024, "x");
      const now = Date.now();
      for (let i = 0; i < count; i += 1000) {
        const messages = [];
        for (let j = i; j < Math.min(count, i + 1000); j++) {
          const f = failure(j);
          // What Spring Kafka's DeadLetterPublishingRecoverer writes (binary partition and offset).
          messages.push({
            partition: j % PARTITIONS,
            key: `order-${j}`,
            value,
            headers: {
              "kafka_dlt-exception-fqcn": f.cls,
              "kafka_dlt-exception-message": f.message,
              "kafka_dlt-exception-stacktrace": f.stack,
              "kafka_dlt-original-topic": "orders",
              "kafka_dlt-original-partition": int32(j % PARTITIONS),
              "kafka_dlt-original-offset": int64(Math.floor(j / PARTITIONS)),
              "kafka_dlt-original-timestamp": int64(now - 60_000),
              "kafka_dlt-original-timestamp-type": "CreateTime",
              "kafka_dlt-original-consumer-group": "orders-service",
              "x-app-version": f.version,
            },
          });
        }
        await producer.send({ topic, acks: -1, messages });
      }
      await producer.disconnect();
    },
    async bare(count, restart) {
      let t0 = performance.now();
      let t1 = 0;
      const { bareKafkaRead } = await import("./bare-reads");
      await bareKafkaRead(await client(), topic, count, {
        onJoin: () => {
          restart();
          t0 = performance.now();
        },
        onDone: () => {
          t1 = performance.now();
        },
      });
      return count / ((t1 - t0) / 1000);
    },
    async adapter(connectionId) {
      const { KafkaAdapter } = await import("../lib/brokers/kafka/adapter");
      const { prismaHandledStore } = await import("../lib/connections/kafka-handled-store");
      const { testConfig } = await import("../lib/brokers/kafka/test-kit");
      // As the registry makes it (lib/connections/registry.ts): handled offsets in the console's database.
      return new KafkaAdapter(testConfig({ id: connectionId, brokers, discover: false, dlqs: [{ name: topic }] }), {
        allManagedHeaders: MANAGED_HEADERS,
        handledStore: prismaHandledStore(),
      });
    },
    async settle() {},
    async drop() {
      const admin = (await client()).admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

// ---------------------------------------------------------------------------------------------- SQS

function sqs(dlq: string): ScanBroker {
  const source = `${dlq.replace(/-dlq$/, "")}-src`;
  const prefix = dlq.replace(/-dlq$/, "");
  const sdk = () => import("@aws-sdk/client-sqs");
  let clientP: Promise<import("@aws-sdk/client-sqs").SQSClient> | null = null;
  const endpoint = async () => (await import("../lib/brokers/sqs/test-kit")).ELASTICMQ_ENDPOINT;
  const client = () =>
    (clientP ??= (async () => {
      const { SQSClient } = await sdk();
      return new SQSClient({
        endpoint: await endpoint(),
        region: "us-east-1",
        credentials: { accessKeyId: "test", secretAccessKey: "test" },
        maxAttempts: 2,
      });
    })());
  const urlOf = async (name: string) => {
    const { GetQueueUrlCommand } = await sdk();
    return (await (await client()).send(new GetQueueUrlCommand({ QueueName: name })).catch(() => null))?.QueueUrl;
  };
  const visible = async (url: string) => {
    const { GetQueueAttributesCommand } = await sdk();
    const a = (
      await (
        await client()
      ).send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      )
    ).Attributes!;
    return { visible: Number(a.ApproximateNumberOfMessages), hidden: Number(a.ApproximateNumberOfMessagesNotVisible) };
  };
  const fresh = async (name: string, attributes: Record<string, string> = {}) => {
    const { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand } = await sdk();
    const c = await client();
    const old = await urlOf(name);
    if (old) await c.send(new DeleteQueueCommand({ QueueUrl: old }));
    const { QueueUrl } = await c.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const arn = (await c.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes!
      .QueueArn!;
    return { url: QueueUrl!, arn };
  };
  return {
    name: "sqs",
    label: "SQS (ElasticMQ)",
    cpu: "elasticmq",
    bareName: "bare ReceiveMessage loop",
    queue: dlq,
    async seed(count, keep) {
      const existing = keep ? await urlOf(dlq) : undefined;
      if (existing && (await urlOf(source)) && (await visible(existing)).visible === count) {
        console.log(`${dlq} holds ${count} letters already: not seeded again`);
        return;
      }
      const { SendMessageBatchCommand } = await sdk();
      const c = await client();
      const d = await fresh(dlq);
      // Named by a source's redrive policy: the adapter knows it as a DLQ. Letters go straight in, for speed.
      await fresh(source, { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: d.arn, maxReceiveCount: 1 }) });
      const body = "x".repeat(1024);
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < count) {
            const start = next;
            next += 10;
            const n = Math.min(10, count - start);
            await c.send(
              new SendMessageBatchCommand({
                QueueUrl: d.url,
                Entries: Array.from({ length: n }, (_, i) => {
                  const f = failure(start + i);
                  const s = (v: string) => ({ DataType: "String", StringValue: v });
                  return {
                    Id: String(i),
                    MessageBody: body,
                    MessageAttributes: {
                      "x-exception-class": s(f.cls),
                      "x-exception-message": s(f.message),
                      "x-exception-stacktrace": s(f.stack),
                      "x-app-version": s(f.version),
                    },
                  };
                }),
              }),
            );
          }
        }),
      );
    },
    async bare(count) {
      const url = (await urlOf(dlq))!;
      const { bareSqsRead } = await import("./bare-reads");
      // The adapter's scan: 4 receivers, then the release 8 batches at once.
      return count / (await bareSqsRead(await client(), url, count, { receivers: 4, waitSeconds: 2, releasers: 8 }));
    },
    async adapter(connectionId) {
      const { SqsAdapter } = await import("../lib/brokers/sqs/adapter");
      const { testConfig } = await import("../lib/brokers/sqs/test-kit");
      return new SqsAdapter(testConfig(await endpoint(), { id: connectionId, queueNamePrefix: prefix }), {
        allManagedHeaders: MANAGED_HEADERS,
      });
    },
    async settle(count) {
      const url = (await urlOf(dlq))!;
      for (let i = 0; i < 300; i++) {
        const v = await visible(url);
        if (v.visible === count && v.hidden === 0) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${dlq}: the letters did not all become visible again after a read`);
    },
    async drop() {
      const { DeleteQueueCommand } = await sdk();
      for (const q of [dlq, source]) {
        const u = await urlOf(q);
        if (u) await (await client()).send(new DeleteQueueCommand({ QueueUrl: u }));
      }
      (await client()).destroy();
      clientP = null;
    },
  };
}
