/**
 * Test and script helpers that make real dead letters on a real Kafka the way applications do:
 * records are produced to a source topic, a consumer in its own group reads them, "fails" on some,
 * and publishes those to a dead-letter topic with the headers Spring Kafka's
 * DeadLetterPublishingRecoverer or Kafka Connect's DeadLetterQueueReporter write. Never used by the app.
 */
import { Kafka, logLevel, type Admin, type Producer, type IHeaders } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import type { ContractLetterInput } from "@/lib/brokers/contract-suite/read";
import { createCluster, mendKafkajs } from "@/lib/brokers/kafka/client";
import { fetchTopicIds, type RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";
import { createTopicWithLeaders } from "@/lib/brokers/kafka/topic-ready";

export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",").map((b) => b.trim());

export function testConfig(over: Partial<KafkaConnectionConfig> = {}): KafkaConnectionConfig {
  return {
    kind: "kafka",
    id: "test-kafka",
    name: "Test Kafka",
    brokers: KAFKA_BROKERS,
    clientId: "dlq-console-test",
    ssl: false,
    dltPatterns: ["*.DLT", "*-dlt", "*.dlq", "dlq.*", "*-dead-letter"],
    discover: true,
    // Off in tests unless a test is about it: share groups other test files make would join exact lists.
    shareGroupDlqs: false,
    dlqs: [],
    consumerGroups: { sample: true, stuckAfterSeconds: 300, exclude: [], dlts: [], createDlt: false },
    ...over,
  };
}

export interface SourceRecord extends ContractLetterInput {
  key?: string | Uint8Array | null;
  partition?: number;
}

export interface FailureSpec {
  exceptionClass: string;
  message: string;
  cause?: string;
}

export const int32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
export const int64be = (n: bigint | number) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
};

function stackOf(f: FailureSpec, frame: string) {
  return `${f.exceptionClass}: ${f.message}\n\tat ${frame}\n\tat org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.doInvokeRecordListener(KafkaMessageListenerContainer.java:2800)`;
}

type Style = "spring" | "connect";

/** Headers the way each framework writes them for a record that failed in `group`. */
export function deadLetterHeaders(
  style: Style,
  rec: { topic: string; partition: number; offset: string; timestamp: string; headers?: IHeaders },
  f: FailureSpec,
  group: string,
): IHeaders {
  const original: IHeaders = { ...(rec.headers ?? {}) };
  if (style === "spring") {
    return {
      ...original,
      "kafka_dlt-original-topic": Buffer.from(rec.topic),
      "kafka_dlt-original-partition": int32be(rec.partition),
      "kafka_dlt-original-offset": int64be(BigInt(rec.offset)),
      "kafka_dlt-original-timestamp": int64be(BigInt(rec.timestamp)),
      "kafka_dlt-original-timestamp-type": Buffer.from("CreateTime"),
      "kafka_dlt-original-consumer-group": Buffer.from(group),
      "kafka_dlt-exception-fqcn": Buffer.from("org.springframework.kafka.listener.ListenerExecutionFailedException"),
      ...((f.cause ?? f.exceptionClass)
        ? { "kafka_dlt-exception-cause-fqcn": Buffer.from(f.cause ?? f.exceptionClass) }
        : {}),
      "kafka_dlt-exception-message": Buffer.from(`Listener failed; ${f.exceptionClass}: ${f.message}`),
      "kafka_dlt-exception-stacktrace": Buffer.from(
        stackOf(f, "com.acme.orders.OrderListener.onOrder(OrderListener.java:42)"),
      ),
    };
  }
  return {
    ...original,
    "__connect.errors.topic": Buffer.from(rec.topic),
    "__connect.errors.partition": Buffer.from(String(rec.partition)),
    "__connect.errors.offset": Buffer.from(rec.offset),
    "__connect.errors.connector.name": Buffer.from(group),
    "__connect.errors.task.id": Buffer.from("0"),
    "__connect.errors.stage": Buffer.from("VALUE_CONVERTER"),
    "__connect.errors.class.name": Buffer.from("org.apache.kafka.connect.json.JsonConverter"),
    "__connect.errors.exception.class.name": Buffer.from(f.exceptionClass),
    "__connect.errors.exception.message": Buffer.from(f.message),
    "__connect.errors.exception.stacktrace": Buffer.from(
      stackOf(f, "org.apache.kafka.connect.json.JsonConverter.toConnectData(JsonConverter.java:333)"),
    ),
  };
}

export class KafkaKit {
  readonly kafka: Kafka;
  private admin: Admin | null = null;
  private producer: Producer | null = null;
  readonly topics = new Set<string>();
  readonly groups = new Set<string>();
  private n = 0;

  constructor(
    readonly prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
    brokers = KAFKA_BROKERS,
  ) {
    this.kafka = mendKafkajs(
      new Kafka({
        clientId: "dlq-console-test-kit",
        brokers,
        logLevel: logLevel.NOTHING,
        connectionTimeout: 3000,
        // A topic created a moment before can answer NOT_LEADER_FOR_PARTITION for a while on a busy
        // machine (seen once in a produce right after createTopicWithLeaders); 6 tries span about 19 s.
        retry: { retries: 6 },
      }),
    );
  }

  name(label: string) {
    return `${this.prefix}.${label}.${++this.n}`;
  }

  async getAdmin(): Promise<Admin> {
    if (!this.admin) {
      this.admin = this.kafka.admin();
      await this.admin.connect();
    }
    return this.admin;
  }

  async getProducer(): Promise<Producer> {
    if (!this.producer) {
      this.producer = this.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await this.producer.connect();
    }
    return this.producer;
  }

  /** Large enough for the contract's 5 MB letter on a broker with default limits. */
  async createTopic(topic: string, partitions = 1, configs: Record<string, string> = {}) {
    const admin = await this.getAdmin();
    await createTopicWithLeaders(admin, {
      topic,
      numPartitions: partitions,
      replicationFactor: 1,
      configEntries: Object.entries({ "max.message.bytes": String(8 * 1024 * 1024), ...configs }).map(
        ([name, value]) => ({ name, value }),
      ),
    });
    this.topics.add(topic);
    return topic;
  }

  async produce(topic: string, records: SourceRecord[]) {
    const producer = await this.getProducer();
    // One record per request keeps order and keeps a 5 MB record within a request.
    for (const r of records) {
      const headers: IHeaders = {};
      for (const [k, v] of Object.entries(r.headers ?? {})) headers[k] = Buffer.from(v, "utf8");
      if (r.messageId) headers["message-id"] = Buffer.from(r.messageId);
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            partition: r.partition ?? 0,
            key: r.key === undefined || r.key === null ? null : Buffer.from(r.key),
            value: Buffer.from(r.body),
            headers,
          },
        ],
      });
    }
  }

  /**
   * Runs an application consumer (its own group, committing as applications do) on `source` that
   * fails on every record `fails` selects and publishes it to `dlt` with `style` headers, until
   * `expected` records were consumed.
   */
  async failingConsumer(
    source: string,
    dlt: string,
    expected: number,
    opts: { style?: Style; fails?: (value: Buffer, i: number) => FailureSpec | null } = {},
  ) {
    const style = opts.style ?? "spring";
    const group = `${this.prefix}-app-${++this.n}`;
    this.groups.add(group);
    const producer = await this.getProducer();
    const consumer = this.kafka.consumer({
      groupId: group,
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 16 * 1024 * 1024,
    });
    await consumer.connect();
    let seen = 0;
    let failed = 0;
    try {
      await consumer.subscribe({ topics: [source], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`failing consumer saw ${seen} of ${expected} records on ${source}`)),
          45_000,
        );
        void consumer
          .run({
            eachMessage: async ({ topic, partition, message }) => {
              const i = seen++;
              const f = opts.fails
                ? opts.fails(message.value ?? Buffer.alloc(0), i)
                : { exceptionClass: "java.lang.IllegalStateException", message: `cannot process record ${i}` };
              if (f) {
                await producer.send({
                  topic: dlt,
                  acks: -1,
                  // Spring's default destination resolver: the same partition of the DLT.
                  messages: [
                    {
                      partition,
                      key: message.key,
                      value: message.value,
                      timestamp: message.timestamp,
                      headers: deadLetterHeaders(
                        style,
                        {
                          topic,
                          partition,
                          offset: message.offset,
                          timestamp: message.timestamp,
                          headers: message.headers,
                        },
                        f,
                        group,
                      ),
                    },
                  ],
                });
                failed++;
              }
              if (seen === expected) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    return { group, failed };
  }

  /** A fresh source topic and its `.DLT`, filled by the failing consumer with Spring-style headers. */
  async springDlt(
    letters: SourceRecord[],
    opts: {
      partitions?: number;
      fails?: (value: Buffer, i: number) => FailureSpec | null;
      dltConfigs?: Record<string, string>;
    } = {},
  ) {
    const source = await this.createTopic(this.name("orders"), opts.partitions ?? 1);
    const dlt = await this.createTopic(`${source}.DLT`, opts.partitions ?? 1, opts.dltConfigs);
    await this.produce(source, letters);
    const { group, failed } = await this.failingConsumer(source, dlt, letters.length, {
      style: "spring",
      fails: opts.fails,
    });
    return { source, dlt, group, failed };
  }

  /** A fresh source topic and a Connect-style `dlq.<name>` topic filled by the failing "sink task". */
  async connectDlq(letters: SourceRecord[], opts: { fails?: (value: Buffer, i: number) => FailureSpec | null } = {}) {
    const source = await this.createTopic(this.name("sink"), 1);
    const dlt = await this.createTopic(`dlq.${source}`, 1);
    await this.produce(source, letters);
    const fails =
      opts.fails ??
      (() => ({
        exceptionClass: "org.apache.kafka.connect.errors.DataException",
        message: "Converting byte[] to Kafka Connect data failed due to serialization error",
      }));
    const { group, failed } = await this.failingConsumer(source, dlt, letters.length, { style: "connect", fails });
    void group;
    return { source, dlt, connector: group, failed };
  }

  /** The topic as the handled store keys it (name and current topic id), for tests that mark offsets directly. */
  async topicKey(topic: string): Promise<{ name: string; id: string | null }> {
    const cluster = createCluster(this.kafka);
    await cluster.connect();
    try {
      await cluster.addTargetTopic(topic);
      const ids = await fetchTopicIds((await cluster.findControllerBroker()) as RawRequestBroker, [topic]);
      return { name: topic, id: ids.get(topic) ?? null };
    } finally {
      await cluster.disconnect();
    }
  }

  /**
   * Every record in `topic` now, with key, value and headers as text, read by a throwaway consumer
   * group from the beginning (nothing is committed that matters: the group is deleted on cleanup).
   */
  async readAll(topic: string): Promise<Array<{ key: string | null; value: string; headers: Record<string, string> }>> {
    const group = `${this.prefix}-read-${++this.n}`;
    this.groups.add(group);
    const admin = await this.getAdmin();
    const expected = (await admin.fetchTopicOffsets(topic)).reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
    const out: Array<{ key: string | null; value: string; headers: Record<string, string> }> = [];
    if (expected === 0) return out;
    const consumer = this.kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`read ${out.length} of ${expected} records of ${topic}`)),
          20_000,
        );
        void consumer.run({
          eachMessage: async ({ message }) => {
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(message.headers ?? {}))
              headers[k] = Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
            out.push({
              key: message.key ? message.key.toString("utf8") : null,
              value: message.value?.toString("utf8") ?? "",
              headers,
            });
            if (out.length >= expected) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    return out;
  }

  async cleanup() {
    const admin = await this.getAdmin().catch(() => null);
    if (admin && this.topics.size)
      await admin.deleteTopics({ topics: [...this.topics], timeout: 10_000 }).catch(() => undefined);
    if (admin && this.groups.size) await admin.deleteGroups([...this.groups]).catch(() => undefined);
    await this.producer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    this.producer = null;
    this.admin = null;
  }
}
