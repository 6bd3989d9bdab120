/**
 * The SQS fixture of the shared broker contracts (redrive, remove, repair), on the real servers:
 * ElasticMQ (standard and FIFO, with DeadLetterQueueSourceArn) and moto (no DeadLetterQueueSourceArn:
 * the origin is the only source queue). A module of its own, not a test file, so that each
 * contract's test file can use it without running the others' tests. Never used by the app.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
} from "@aws-sdk/client-sqs";
import type { ArrivedLetter, RedriveContractFixture, RedriveDestination } from "@/lib/brokers/contract-suite/redrive";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { AdapterSetup } from "@/lib/brokers/contract/adapter";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { SqsConnectionConfig } from "@/lib/config";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { readMarkers } from "@/lib/brokers/sqs/markers";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";

/** Receives what is visible in a queue, each held for 20 s, until two receives come back empty or one brings a letter `stop` picks. */
async function receiveAll(kit: SqsKit, url: string, stop: (m: Message) => boolean = () => false): Promise<Message[]> {
  const got: Message[] = [];
  let empties = 0;
  while (empties < 2) {
    const out = await kit.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 20,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ["All"],
        MessageAttributeNames: ["All"],
      }),
    );
    const ms = out.Messages ?? [];
    got.push(...ms);
    if (ms.some(stop)) break;
    empties = ms.length ? 0 : empties + 1;
  }
  return got;
}

async function release(kit: SqsKit, url: string, got: Message[]): Promise<void> {
  for (let i = 0; i < got.length; i += 10) {
    const batch = got.slice(i, i + 10);
    await kit.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: batch.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })),
      }),
    );
  }
}

/** Everything in a queue, without taking it away: receive until empty, then release it all at once. */
export async function peekAll(kit: SqsKit, url: string): Promise<Message[]> {
  const got = await receiveAll(kit, url);
  await release(kit, url, got);
  const seq = (m: Message) => BigInt(m.Attributes?.SequenceNumber ?? "0");
  const sent = (m: Message) => Number(m.Attributes?.SentTimestamp ?? 0);
  return got.sort((a, b) => (seq(a) !== seq(b) ? (seq(a) < seq(b) ? -1 : 1) : sent(a) - sent(b)));
}

export function arrived(m: Message): ArrivedLetter {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.MessageAttributes ?? {}))
    headers[k] = v.StringValue ?? Buffer.from(v.BinaryValue ?? new Uint8Array()).toString("base64");
  const mk = readMarkers(m.MessageAttributes);
  if (mk.redriveId !== undefined) headers[REDRIVE_HEADERS.redriveId] ??= mk.redriveId;
  if (mk.replayId !== undefined) headers[REDRIVE_HEADERS.replayId] ??= mk.replayId;
  if (mk.redriveCount !== undefined) headers[REDRIVE_HEADERS.redriveCount] ??= String(mk.redriveCount);
  if (mk.originalMessageId) headers[REDRIVE_HEADERS.originalMessageId] ??= mk.originalMessageId;
  if (mk.repairedByOperation) headers[REPAIR_HEADER] ??= mk.repairedByOperation;
  return {
    body: Buffer.from(m.Body ?? "", "utf8"),
    headers,
    messageId: m.MessageId ?? null,
    orderingKey: m.Attributes?.MessageGroupId ?? null,
  };
}

export const destination = (kit: SqsKit, name: string, url: string): RedriveDestination => ({
  name,
  read: async () => (await peekAll(kit, url)).map(arrived),
});

/** The servers and queue kinds every shared contract runs on. */
export const SQS_CONTRACT_SERVERS = [
  { label: "sqs (ElasticMQ)", endpoint: ELASTICMQ_ENDPOINT, over: {}, fifo: false },
  { label: "sqs FIFO (ElasticMQ)", endpoint: ELASTICMQ_ENDPOINT, over: {}, fifo: true },
  { label: "sqs (moto)", endpoint: MOTO_ENDPOINT, over: { messageMoveTasks: false }, fifo: false },
] as const satisfies ReadonlyArray<{
  label: string;
  endpoint: string;
  over: Partial<SqsConnectionConfig>;
  fifo: boolean;
}>;

/**
 * A fresh fixture (its own kit, prefix and adapter) for one server and queue kind. The managed
 * header names come from the test (lib/connections' union of every adapter's), since this file, in
 * a broker's folder, may import no other broker's (lib/layout.test.ts).
 */
export function sqsContractFixture(
  endpoint: string,
  over: Partial<SqsConnectionConfig>,
  fifo: boolean,
  setup: AdapterSetup,
): () => Promise<RedriveContractFixture> {
  return async () => {
    const kit = new SqsKit(endpoint);
    const adapter = new SqsAdapter(testConfig(endpoint, { queueNamePrefix: kit.prefix, ...over }), setup);
    const made = new Map<string, { dlqUrl: string; source: string; sourceUrl: string }>();
    return {
      adapter,
      // maxReceiveCount 5: the fixture's own reads of the origin (receive, then release) must not dead-letter what arrived.
      createDlq: async (letters) => {
        const r = await kit.dlqByRedrive(
          letters.map((l) => ({ ...l, groupId: l.orderingKey })),
          { fifo, maxReceiveCount: 5 },
        );
        made.set(r.dlq, r);
        return r.dlq;
      },
      originOf: (dlq) => destination(kit, made.get(dlq)!.source, made.get(dlq)!.sourceUrl),
      createQueue: async () => {
        const q = await kit.queue(kit.name("target", fifo), fifo ? { FifoQueue: "true" } : {});
        return destination(kit, q.name, q.url);
      },
      deadLetterAgain: async (dlq) => {
        const m = made.get(dlq)!;
        // count, not depth: the test has just released the letter in the source (peekAll).
        const back = (await kit.count(m.sourceUrl)) + (await kit.count(m.dlqUrl));
        await kit.failUntilMoved(m.sourceUrl, m.dlqUrl, back);
      },
      // Another consumer: receive until the letter comes, delete it, release the rest. A letter in
      // flight elsewhere (a running move's) cannot be received: false.
      takeAway: async (dlq, letter: Letter) => {
        const url = made.get(dlq)!.dlqUrl;
        const body = Buffer.from(letter.body).toString("utf8");
        const got = await receiveAll(kit, url, (m) => m.Body === body);
        const hit = got.find((m) => m.Body === body);
        if (hit) await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: hit.ReceiptHandle! }));
        await release(
          kit,
          url,
          got.filter((m) => m !== hit),
        );
        return hit !== undefined;
      },
      deadLetterMore: async (dlq, letters) => {
        const m = made.get(dlq)!;
        for (const l of letters) await kit.send(m.sourceUrl, { ...l, groupId: l.orderingKey }, fifo);
        // Received past maxReceiveCount, the server moves them: the source is empty again. ElasticMQ
        // counts a letter sent or released in this very millisecond neither visible nor in flight,
        // so each count waits for a later one.
        const empty = async () => {
          await new Promise((r) => setTimeout(r, 5));
          return (await kit.count(m.sourceUrl)) === 0;
        };
        const end = Date.now() + 30_000;
        while (!(await empty())) {
          if (Date.now() > end) throw new Error(`${m.source}: letters not dead-lettered within 30 s`);
          await kit.sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: m.sourceUrl,
              MaxNumberOfMessages: 10,
              VisibilityTimeout: 0,
              WaitTimeSeconds: 0,
            }),
          );
        }
      },
      cleanup: async () => {
        await adapter.close();
        await kit.cleanup();
      },
      removesFromDlq: true,
      orderingKeys: fifo,
      twins: false,
    };
  };
}
