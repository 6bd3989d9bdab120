/**
 * Seeds demo SQS dead letters into a local SQS server (ElasticMQ) by REAL redrive: messages are sent
 * to source queues whose redrive policy names a DLQ, then received (and never deleted) until the
 * server moves them by maxReceiveCount. Error attributes are set by the producer, the way
 * applications, Lambda and EventBridge write them. Idempotent: demo queues are deleted and recreated.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type MessageAttributeValue,
} from "@aws-sdk/client-sqs";

import { HOSTILE_DLQS, HOSTILE_EXCEPTION, HOSTILE_LETTERS } from "./hostile-corpus";

export const SQS_DEMO_ENDPOINT = process.env.SQS_ENDPOINT ?? "http://127.0.0.1:9324";

type Attrs = Record<string, MessageAttributeValue>;
const s = (v: string): MessageAttributeValue => ({ DataType: "String", StringValue: v });

interface DemoLetter {
  body: string;
  attributes?: Attrs;
  groupId?: string;
}

function client(endpoint: string) {
  return new SQSClient({
    endpoint,
    region: process.env.SQS_REGION ?? "us-east-1",
    credentials: {
      accessKeyId: process.env.SQS_ACCESS_KEY_ID || "test",
      secretAccessKey: process.env.SQS_SECRET_ACCESS_KEY || "test",
    },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 2000, requestTimeout: 10_000 },
  });
}

/** True when an SQS server answers at `endpoint`. */
export async function sqsAnswers(endpoint = SQS_DEMO_ENDPOINT): Promise<boolean> {
  const sqs = client(endpoint);
  try {
    await sqs.send(new ListQueuesCommand({ MaxResults: 1 }));
    return true;
  } catch {
    return false;
  } finally {
    sqs.destroy();
  }
}

/** Makes `dlq` and `source` afresh (redrive policy to the DLQ) and fills the DLQ by real redrive. */
function pairSeeder(sqs: SQSClient) {
  const depth = async (url: string) =>
    Number(
      (
        await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessages"] }),
        )
      ).Attributes?.ApproximateNumberOfMessages ?? 0,
    );
  const fresh = async (name: string, attributes: Record<string, string> = {}) => {
    const old = await sqs.send(new GetQueueUrlCommand({ QueueName: name })).catch(() => null);
    if (old?.QueueUrl) await sqs.send(new DeleteQueueCommand({ QueueUrl: old.QueueUrl }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }))).Attributes!
      .QueueArn!;
    return { url: QueueUrl!, arn };
  };
  return async (source: string, dlq: string, letters: DemoLetter[], maxReceiveCount: number, fifo = false) => {
    const f: Record<string, string> = fifo ? { FifoQueue: "true" } : {};
    const d = await fresh(dlq, f);
    const src = await fresh(source, {
      ...f,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: d.arn, maxReceiveCount }),
    });
    let n = 0;
    for (const l of letters) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: src.url,
          MessageBody: l.body,
          MessageAttributes: l.attributes,
          MessageGroupId: fifo ? (l.groupId ?? "g") : undefined,
          MessageDeduplicationId: fifo ? `demo-${Date.now()}-${++n}` : undefined,
        }),
      );
    }
    // A consumer that keeps failing: receive, never delete, until SQS moves every letter.
    const until = Date.now() + 30_000;
    while ((await depth(d.url)) < letters.length) {
      if (Date.now() > until)
        throw new Error(`${dlq}: SQS moved only ${await depth(d.url)} of ${letters.length} letters`);
      await sqs.send(new ReceiveMessageCommand({ QueueUrl: src.url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
    }
    return { [dlq]: await depth(d.url) };
  };
}

export async function seedSqsDemo(endpoint = SQS_DEMO_ENDPOINT): Promise<Record<string, number>> {
  const sqs = client(endpoint);
  const pair = pairSeeder(sqs);

  try {
    const orders: DemoLetter[] = [
      {
        body: JSON.stringify({ orderId: 5001, total: "129.90", currency: "EUR" }),
        attributes: {
          exceptionClass: s("com.acme.orders.PaymentDeclinedException"),
          errorMessage: s("Card ending 4242 declined"),
          contentType: s("application/json"),
          attempt: { DataType: "Number", StringValue: "3" },
        },
      },
      {
        body: JSON.stringify({ orderId: 5002, total: "15.00" }),
        attributes: {
          exceptionClass: s("com.acme.orders.PaymentDeclinedException"),
          errorMessage: s("Card ending 1881 declined"),
          contentType: s("application/json"),
        },
      },
      {
        body: JSON.stringify({ orderId: 5003 }),
        attributes: {
          "exception-class": s("java.lang.NullPointerException"),
          "error-message": s("customer is null"),
          traceId: { DataType: "String.trace", StringValue: "1-abc-def" },
        },
      },
      {
        body: "ORDER 5004 qty=2 sku=AB-12 (plain text)",
        attributes: { errorType: s("ParseError"), errorMessage: s("Unexpected token O in JSON at position 0") },
      },
      {
        body: "eyJvcmRlcklkIjo1MDA1fQ==",
        attributes: {
          errorType: s("ValidationError"),
          note: s("base64-looking body: shown as text, never decoded"),
          signature: { DataType: "Binary", BinaryValue: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]) },
        },
      },
    ];
    const lambda: DemoLetter[] = [1, 2].map((i) => ({
      body: JSON.stringify({ detail: { invoiceId: `inv-${i}` } }),
      attributes: {
        ErrorCode: s("200"),
        ErrorMessage: s(JSON.stringify({ errorType: "TimeoutError", errorMessage: "Tax service did not answer" })),
        RequestID: s(`6f1c-${i}`),
      },
    }));
    const fifo: DemoLetter[] = [1, 2, 3].map((i) => ({
      body: JSON.stringify({ ledgerEntry: i, account: i % 2 ? "acc-1" : "acc-2" }),
      groupId: i % 2 ? "acc-1" : "acc-2",
      attributes: { exceptionClass: s("com.acme.ledger.OutOfOrderException") },
    }));
    const journal: DemoLetter[] = Array.from({ length: 14 }, (_, i) => ({
      body: JSON.stringify({ journalEntry: i + 1, account: "acc-9" }),
      groupId: "acc-9",
      attributes: {
        exceptionClass: s("com.acme.ledger.PeriodClosedException"),
        errorMessage: s(`Period 2026-10 is closed (entry ${i + 1})`),
      },
    }));
    return {
      ...(await pair("demo-orders", "demo-orders-dlq", orders, 2)),
      ...(await pair("demo-invoices", "demo-invoices-dlq", lambda, 1)),
      ...(await pair("demo-ledger.fifo", "demo-ledger-dlq.fifo", fifo, 1, true)),
      // One account's journal, 14 letters in one message group: SQS hands out the later letters of
      // a FIFO group only after the earlier ones are deleted, so a scan can read just the first ten
      // and says so.
      ...(await pair("demo-journal.fifo", "demo-journal-dlq.fifo", journal, 1, true)),
    };
  } finally {
    sqs.destroy();
  }
}

/**
 * The hostile corpus (lib/demo/hostile-corpus.ts) in demo-hostile-dlq: header entries as String
 * attributes, the failure as exceptionClass / errorMessage attributes, the letter's label as
 * x-hostile-letter. The invalid-UTF-8 letter's bytes go in a Binary attribute (an SQS body is text).
 */
export async function seedSqsHostile(endpoint = SQS_DEMO_ENDPOINT): Promise<Record<string, number>> {
  const sqs = client(endpoint);
  const text = new TextDecoder("utf-8", { fatal: false });
  try {
    const letters: DemoLetter[] = HOSTILE_LETTERS.map((l) => {
      const isText = l.label !== "hostile-bytes";
      const attributes: Attrs = {
        "x-hostile-letter": s(l.label),
        exceptionClass: s(HOSTILE_EXCEPTION.className),
        errorMessage: s(HOSTILE_EXCEPTION.message),
        contentType: s(l.contentType),
        ...Object.fromEntries(Object.entries({ ...l.headers, ...l.secretHeaders }).map(([k, v]) => [k, s(v)])),
      };
      if (!isText) attributes["x-hostile-bytes"] = { DataType: "Binary", BinaryValue: l.body };
      return {
        body: isText ? text.decode(l.body) : "the hostile bytes are in the x-hostile-bytes attribute",
        attributes,
      };
    });
    return await pairSeeder(sqs)(HOSTILE_DLQS.sqs.source, HOSTILE_DLQS.sqs.dlq, letters, 1);
  } finally {
    sqs.destroy();
  }
}
