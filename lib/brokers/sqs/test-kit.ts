/**
 * Test and script helpers that make real SQS dead letters: send to a source queue whose redrive
 * policy names the DLQ, then receive until the server itself moves the letters (maxReceiveCount).
 * Works against ElasticMQ and moto. Never used by the app.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type MessageAttributeValue,
} from "@aws-sdk/client-sqs";
import type { SqsConnectionConfig } from "@/lib/config";
import type { ContractLetterInput } from "@/lib/brokers/contract-suite/read";
import { isValidUtf8 } from "@/lib/brokers/display";

export const ELASTICMQ_ENDPOINT = process.env.SQS_ENDPOINT ?? "http://127.0.0.1:9324";
export const MOTO_ENDPOINT = process.env.MOTO_ENDPOINT ?? "http://127.0.0.1:9325";

export function testConfig(endpoint: string, over: Partial<SqsConnectionConfig> = {}): SqsConnectionConfig {
  return {
    kind: "sqs",
    id: "test-sqs",
    name: "Test SQS",
    region: "us-east-1",
    endpoint,
    accessKeyIdEnv: "SQS_TEST_ACCESS_KEY_ID",
    secretAccessKeyEnv: "SQS_TEST_SECRET_ACCESS_KEY",
    discover: true,
    dlqs: [],
    readVisibilityTimeoutSeconds: 30,
    messageMoveTasks: true,
    ...over,
  };
}

// What SQS accepts in a body: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
const SQS_FORBIDDEN = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** The body as the SQS string it must be, or a clear refusal: bytes are never re-encoded to fit. */
export function sqsBodyOf(body: Uint8Array): string {
  // Not TextDecoder: it drops a leading byte order mark, and the body must stay byte-exact.
  const s = isValidUtf8(body) ? Buffer.from(body).toString("utf8") : null;
  if (s === null)
    throw new Error(
      "SQS message bodies are Unicode text: these bytes are not valid UTF-8 (binary bodies cannot be sent to SQS as they are)",
    );
  if (SQS_FORBIDDEN.test(s))
    throw new Error(
      "SQS message bodies are Unicode text: this body holds characters SQS refuses (binary control characters)",
    );
  if (s.length === 0)
    throw new Error("SQS message bodies are Unicode text of at least one character: an empty body cannot be sent");
  return s;
}

export interface SqsLetterInput extends ContractLetterInput {
  attributes?: Record<string, MessageAttributeValue>;
  groupId?: string;
}

export class SqsKit {
  readonly sqs: SQSClient;
  readonly urls = new Set<string>();
  private n = 0;

  constructor(
    readonly endpoint: string,
    readonly prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`,
  ) {
    this.sqs = new SQSClient({
      endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      maxAttempts: 2,
    });
  }

  name(label: string, fifo = false) {
    return `${this.prefix}-${label}-${++this.n}${fifo ? ".fifo" : ""}`;
  }

  async queue(
    name: string,
    attributes: Record<string, string> = {},
  ): Promise<{ url: string; arn: string; name: string }> {
    const { QueueUrl } = await this.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    this.urls.add(QueueUrl!);
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }),
    );
    return { url: QueueUrl!, arn: Attributes!.QueueArn!, name };
  }

  async depth(url: string): Promise<number> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
  }

  /** When the last send was answered: the next one waits for a later millisecond. */
  private lastSentMs = 0;

  /**
   * Every letter in the queue, visible or in flight. Right after letters are released (visibility
   * 0), ElasticMQ counts them as not visible until the next millisecond, so depth() alone can miss
   * them.
   */
  async count(url: string): Promise<number> {
    const { Attributes } = await this.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0)
    );
  }

  /**
   * Sends one letter. A standard queue keeps no order: letters are listed by SentTimestamp, which
   * has millisecond precision, and letters sent within one millisecond are ordered by MessageId.
   * So every send starts in a later millisecond than the previous send's answer, and tests that
   * expect letters in the order they were sent get exactly that.
   */
  async send(url: string, l: SqsLetterInput, fifo = false): Promise<string> {
    while (Date.now() <= this.lastSentMs) await new Promise((r) => setTimeout(r, 1));
    const attrs: Record<string, MessageAttributeValue> = { ...l.attributes };
    for (const [k, v] of Object.entries(l.headers ?? {})) attrs[k] = { DataType: "String", StringValue: v };
    const out = await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: sqsBodyOf(l.body),
        MessageAttributes: Object.keys(attrs).length ? attrs : undefined,
        MessageGroupId: fifo ? (l.groupId ?? "g1") : undefined,
        MessageDeduplicationId: fifo ? `${Date.now()}-${++this.n}` : undefined,
      }),
    );
    this.lastSentMs = Date.now();
    return out.MessageId!;
  }

  /** Receives from `source` (visibility 0) until the server has moved `n` letters into `dlqUrl`. */
  async failUntilMoved(source: string, dlqUrl: string, n: number, timeoutMs = 30_000) {
    const until = Date.now() + timeoutMs;
    while ((await this.depth(dlqUrl)) < n) {
      if (Date.now() > until)
        throw new Error(`the server moved only ${await this.depth(dlqUrl)} of ${n} letters to the DLQ`);
      await this.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: source,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 0,
        }),
      );
    }
  }

  /** A fresh DLQ filled by the server's own redrive (maxReceiveCount), letters sent in order. */
  async dlqByRedrive(
    letters: SqsLetterInput[],
    o: {
      maxReceiveCount?: number;
      fifo?: boolean;
      dlqAttributes?: Record<string, string>;
      sourceAttributes?: Record<string, string>;
    } = {},
  ): Promise<{ dlq: string; dlqUrl: string; dlqArn: string; source: string; sourceUrl: string; messageIds: string[] }> {
    // Refuse what SQS cannot carry before anything is created.
    for (const l of letters) sqsBodyOf(l.body);
    const fifo = o.fifo ?? false;
    const fifoAttrs: Record<string, string> = fifo ? { FifoQueue: "true" } : {};
    const dlq = await this.queue(this.name("dlq", fifo), { ...fifoAttrs, ...o.dlqAttributes });
    const source = await this.queue(this.name("work", fifo), {
      ...fifoAttrs,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: o.maxReceiveCount ?? 1 }),
      ...o.sourceAttributes,
    });
    const messageIds: string[] = [];
    for (const l of letters) messageIds.push(await this.send(source.url, l, fifo));
    await this.failUntilMoved(source.url, dlq.url, letters.length);
    return { dlq: dlq.name, dlqUrl: dlq.url, dlqArn: dlq.arn, source: source.name, sourceUrl: source.url, messageIds };
  }

  async cleanup() {
    for (const QueueUrl of this.urls) await this.sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
    this.urls.clear();
    this.sqs.destroy();
  }
}
