// Smoke tests: our Node clients (kafkajs 2.2.4, @aws-sdk/client-sqs v3) against the real Apache Kafka
// broker and ElasticMQ that `bash scripts/services.sh start` runs on 127.0.0.1. They fail (never
// skip) when the services are not running: start them first.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { AssignerProtocol, Kafka, logLevel, type PartitionAssigner } from "kafkajs";
import { topicHasLeaders } from "@/lib/brokers/kafka/topic-ready";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
  type Message,
} from "@aws-sdk/client-sqs";

const KAFKA_BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",").map((b) => b.trim());
const SQS_ENDPOINT = process.env.SQS_ENDPOINT ?? "http://127.0.0.1:9324";
const HOW_TO_START = "start the services with `bash scripts/services.sh start`";

async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("Kafka broker (kafkajs)", () => {
  const kafka = new Kafka({
    clientId: "dlq-console-smoke",
    brokers: KAFKA_BROKERS,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 10_000,
    retry: { retries: 2 },
  });
  const admin = kafka.admin();
  const topic = `dlq-console.smoke.${randomUUID()}.DLT`;

  // Connection checks live inside the test, not in beforeAll, so that a missing broker is a failed
  // test rather than skipped ones.
  let connected = false;
  afterAll(async () => {
    if (!connected) return;
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    await admin.disconnect();
  });

  it("creates a topic, produces idempotently with acks=all, reads back by assignment + seek, deletes", async () => {
    try {
      await admin.connect();
      connected = true;
    } catch (error) {
      throw new Error(`Kafka is not reachable at ${KAFKA_BROKERS.join(",")}: ${HOW_TO_START} (${error})`);
    }
    expect(
      await admin.createTopics({ waitForLeaders: false, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] }),
    ).toBe(true);
    expect(await topicHasLeaders(admin, topic, 2)).toBe(true);

    // Headers the way Spring's DeadLetterPublishingRecoverer writes them: partition/offset are
    // binary big-endian, plus bytes that are not valid UTF-8 and an empty value.
    const offsetBytes = Buffer.from([0, 0, 0, 0, 0, 0, 0x01, 0x2c]);
    const headers = {
      "kafka_dlt-original-topic": Buffer.from("orders"),
      "kafka_dlt-original-partition": Buffer.from([0, 0, 0, 3]),
      "kafka_dlt-original-offset": offsetBytes,
      "kafka_dlt-exception-message": Buffer.from("Ünïcödé 💥 failure", "utf8"),
      "x-binary": Buffer.from([0x00, 0xff, 0x80, 0x7f, 0xc3]),
      "x-empty": Buffer.alloc(0),
    };
    const value = Buffer.from([0x7b, 0x00, 0xfe, 0x22, 0x7d]);

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const [meta] = await producer.send({
        topic,
        acks: -1,
        messages: [{ partition: 1, key: "order-42", value, headers }],
      });
      expect(meta).toMatchObject({ topicName: topic, partition: 1, errorCode: 0 });
      expect(meta.baseOffset).toBe("0");
    } finally {
      await producer.disconnect();
    }

    // kafkajs has no group-less assign(): a throwaway group whose assigner hands this member exactly
    // partition 1, then seek, and never commit.
    const groupId = `dlq-console-smoke-${randomUUID()}`;
    const onlyPartition1: PartitionAssigner = () => ({
      name: "DlqConsoleFixed",
      version: 1,
      async assign({ members }) {
        return members.map((m, i) => ({
          memberId: m.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 1,
            assignment: i === 0 ? { [topic]: [1] } : {},
            userData: Buffer.alloc(0),
          }),
        }));
      },
      protocol({ topics }) {
        return {
          name: "DlqConsoleFixed",
          metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
        };
      },
    });
    const consumer = kafka.consumer({ groupId, partitionAssigners: [onlyPartition1], maxWaitTimeInMs: 500 });
    await consumer.connect();
    const got: {
      partition: number;
      offset: string;
      key: Buffer | null;
      value: Buffer | null;
      headers: Record<string, unknown>;
    }[] = [];
    try {
      // Seek once the group is joined (seek before that throws in kafkajs); without the seek the
      // consumer would start at the end (fromBeginning false) and read nothing.
      let seeked = false;
      consumer.on(consumer.events.GROUP_JOIN, () => {
        if (!seeked) consumer.seek({ topic, partition: 1, offset: "0" });
        seeked = true;
      });
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          got.push({
            partition,
            offset: message.offset,
            key: message.key,
            value: message.value,
            headers: message.headers ?? {},
          });
        },
      });
      await eventually("the record to be read back", async () => (got.length > 0 ? true : undefined), 30_000);
    } finally {
      await consumer.disconnect();
    }

    expect(got).toHaveLength(1);
    expect(got[0].partition).toBe(1);
    expect(got[0].offset).toBe("0");
    expect(got[0].key?.equals(Buffer.from("order-42"))).toBe(true);
    expect(got[0].value?.equals(value)).toBe(true);
    expect(Object.keys(got[0].headers).sort()).toEqual(Object.keys(headers).sort());
    for (const [name, bytes] of Object.entries(headers)) {
      const read = got[0].headers[name];
      expect(Buffer.isBuffer(read), name).toBe(true);
      expect((read as Buffer).toString("hex"), name).toBe(bytes.toString("hex"));
    }
    expect((got[0].headers["kafka_dlt-original-offset"] as Buffer).readBigInt64BE()).toBe(300n);

    // Nothing was committed for the group.
    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(committed[0].partitions.every((p) => p.offset === "-1")).toBe(true);
    await admin.deleteGroups([groupId]).catch(() => {});

    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
    await eventually("the topic to disappear", async () =>
      (await admin.listTopics()).includes(topic) ? undefined : true,
    );
  });
});

describe("SQS server (@aws-sdk/client-sqs against ElasticMQ)", () => {
  const sqs = new SQSClient({
    endpoint: SQS_ENDPOINT,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 2,
  });
  const suffix = randomUUID().slice(0, 8);
  const queueUrls: string[] = [];

  async function createQueue(name: string, attributes?: Record<string, string>) {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    queueUrls.push(QueueUrl!);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
    return { url: QueueUrl!, arn: Attributes!.QueueArn! };
  }
  async function receiveOne(QueueUrl: string): Promise<Message | undefined> {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 1,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    return Messages?.[0];
  }

  async function expectServer() {
    try {
      await sqs.send(new ListQueuesCommand({ MaxResults: 1 }));
    } catch (error) {
      throw new Error(`no SQS server at ${SQS_ENDPOINT}: ${HOW_TO_START} (${error})`);
    }
  }
  afterAll(async () => {
    for (const QueueUrl of queueUrls) await sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => {});
    sqs.destroy();
  });

  it("dead-letters by maxReceiveCount, lists the source, keeps attributes and DeadLetterQueueSourceArn, moves back", async () => {
    await expectServer();
    const dlq = await createQueue(`smoke-orders-dlq-${suffix}`);
    expect(dlq.arn).toBe(`arn:aws:sqs:us-east-1:000000000000:smoke-orders-dlq-${suffix}`);
    const source = await createQueue(`smoke-orders-${suffix}`, {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 1 }),
    });

    const body = `{"order":42,"note":"Ünïcödé 💥"}`;
    const attributes = {
      "x-exception-class": { DataType: "String", StringValue: "java.lang.IllegalStateException" },
      "x-attempt": { DataType: "Number", StringValue: "3" },
      "x-binary": { DataType: "Binary", BinaryValue: new Uint8Array([0x00, 0xff, 0x80, 0x7f]) },
    };
    const { MessageId } = await sqs.send(
      new SendMessageCommand({ QueueUrl: source.url, MessageBody: body, MessageAttributes: attributes }),
    );

    // First receive: receive count 1. The next receive exceeds maxReceiveCount and the server itself
    // moves the message to the DLQ.
    const first = await receiveOne(source.url);
    expect(first?.MessageId).toBe(MessageId);
    expect(first?.Attributes?.ApproximateReceiveCount).toBe("1");
    const second = await receiveOne(source.url);
    expect(second).toBeUndefined();

    const { queueUrls: sources } = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq.url }));
    expect(sources).toEqual([source.url]);

    const letter = await eventually("the letter in the DLQ", () => receiveOne(dlq.url));
    expect(letter.MessageId).toBe(MessageId);
    expect(letter.Body).toBe(body);
    expect(letter.Attributes?.DeadLetterQueueSourceArn).toBe(source.arn);
    expect(letter.Attributes?.SentTimestamp).toMatch(/^\d+$/);
    expect(letter.MessageAttributes?.["x-exception-class"]).toMatchObject({
      DataType: "String",
      StringValue: "java.lang.IllegalStateException",
    });
    expect(letter.MessageAttributes?.["x-attempt"]).toMatchObject({ DataType: "Number", StringValue: "3" });
    expect(letter.MessageAttributes?.["x-binary"]?.DataType).toBe("Binary");
    expect(Buffer.from(letter.MessageAttributes!["x-binary"].BinaryValue!).toString("hex")).toBe("00ff807f");

    // The native bulk move: back to the queue it came from.
    const { TaskHandle } = await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, MaxNumberOfMessagesPerSecond: 10 }),
    );
    expect(TaskHandle).toBeTruthy();
    const { Results } = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlq.arn }));
    expect(Results?.length).toBeGreaterThan(0);
    expect(Results?.[0].SourceArn).toBe(dlq.arn);
    const back = await eventually("the letter back in its source queue", () => receiveOne(source.url));
    expect(back.Body).toBe(body);
  });
});
