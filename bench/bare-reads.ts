/**
 * The bare-client reads the benches hold the console's reads against (bench/kafka-read.ts,
 * bench/sqs-read.ts, bench/scan-brokers.ts): each is the least a client of that broker can do to read
 * every letter, and every bench measures the same loop.
 */
import { randomUUID } from "node:crypto";
import { ChangeMessageVisibilityBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Kafka } from "kafkajs";

/**
 * A kafkajs consumer in a throwaway group reads `topic` from its start until `count` records came
 * (eachBatch, counting only, no commits: the ceiling kafkajs sets with its default fetch sizes).
 * `onJoin` runs when the group is joined (the clock should start there: joining and rebalancing are
 * not the read), `onDone` as the last record arrives, before anything is closed. Throws unless
 * exactly `count` records came.
 */
export async function bareKafkaRead(
  kafka: Kafka,
  topic: string,
  count: number,
  hooks: { onJoin?: () => void; onDone?: () => void } = {},
): Promise<void> {
  const groupId = `bench-bare-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  consumer.on(consumer.events.GROUP_JOIN, () => hooks.onJoin?.());
  await consumer.connect();
  let n = 0;
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      let done = false;
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            n += batch.messages.length;
            if (n >= count && !done) {
              done = true;
              hooks.onDone?.();
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
  if (n !== count) throw new Error(`bare consumer read ${n} records, expected ${count}`);
}

/**
 * `receivers` ReceiveMessage loops (10 letters each, every attribute, 30 s visibility) until `count`
 * letters came or two receives found nothing, then every letter released at once, `releasers`
 * ChangeMessageVisibilityBatch calls at a time (the adapter's scan releases 8 at a time). Returns the
 * seconds it took; throws unless exactly `count` letters came.
 */
export async function bareSqsRead(
  client: SQSClient,
  url: string,
  count: number,
  opts: { receivers: number; waitSeconds: number; releasers: number },
): Promise<number> {
  const t0 = performance.now();
  const handles: string[] = [];
  let empties = 0;
  await Promise.all(
    Array.from({ length: opts.receivers }, async () => {
      while (handles.length < count && empties < 2) {
        const out = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: Math.min(10, count - handles.length) || 1,
            VisibilityTimeout: 30,
            WaitTimeSeconds: opts.waitSeconds,
            MessageSystemAttributeNames: ["All"],
            MessageAttributeNames: ["All"],
          }),
        );
        const msgs = out.Messages ?? [];
        if (msgs.length === 0) empties++;
        for (const m of msgs) if (m.ReceiptHandle) handles.push(m.ReceiptHandle);
      }
    }),
  );
  let at = 0;
  await Promise.all(
    Array.from({ length: opts.releasers }, async () => {
      while (at < handles.length) {
        const batch = handles.slice(at, at + 10);
        at += 10;
        await client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: url,
            Entries: batch.map((ReceiptHandle, j) => ({ Id: String(j), ReceiptHandle, VisibilityTimeout: 0 })),
          }),
        );
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  if (handles.length !== count) throw new Error(`bare loop read ${handles.length} of ${count}`);
  return s;
}
