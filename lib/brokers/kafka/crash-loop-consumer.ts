/**
 * Test fixture: an application consumer that crash-loops on a poison record. A real kafkajs
 * consumer in its own group; `eachMessage` throws for every record `isPoison` selects, so kafkajs
 * never resolves that offset, retries it again and again, and the group's committed offset on that
 * partition never moves past it, while the other partitions drain and commit. Never used by the app.
 */
import type { Consumer, Kafka, KafkaMessage } from "kafkajs";

export interface ConsumedRecord {
  partition: number;
  offset: string;
  key: string | null;
  value: string;
}

export interface CrashLoopConsumer {
  groupId: string;
  /** Records processed successfully, in the order they were processed. */
  consumed: ConsumedRecord[];
  /** Times a poison record was handed to the application (and failed). */
  failures: number;
  /** Resolves when `predicate` holds for what was consumed (checked after each record, failed ones too). */
  until(predicate: (consumed: ConsumedRecord[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Leaves the group (disconnect), as a scaled-to-zero application does. */
  stop(): Promise<void>;
}

export async function startCrashLoopConsumer(
  kafka: Kafka,
  opts: { groupId: string; topic: string; isPoison: (m: KafkaMessage, partition: number) => boolean },
): Promise<CrashLoopConsumer> {
  const consumer: Consumer = kafka.consumer({
    groupId: opts.groupId,
    maxWaitTimeInMs: 100,
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    // Retries the failing batch for as long as the test runs instead of crashing and rejoining:
    // the member stays in the group, as a crash-looping application's pod does between restarts.
    retry: { retries: 100_000, initialRetryTime: 100, maxRetryTime: 300, factor: 0.2, multiplier: 1.5 },
  });
  const waiters = new Set<{ predicate: (c: ConsumedRecord[]) => boolean; resolve: () => void }>();
  const self: CrashLoopConsumer = {
    groupId: opts.groupId,
    consumed: [],
    failures: 0,
    until(predicate, timeoutMs = 30_000) {
      if (predicate(self.consumed)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = {
          predicate,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(
            new Error(
              `crash-loop consumer ${opts.groupId}: condition not met after ${timeoutMs} ms (${self.consumed.length} consumed, ${self.failures} failures)`,
            ),
          );
        }, timeoutMs);
        waiters.add(w);
      });
    },
    async stop() {
      await consumer.disconnect();
    },
  };
  await consumer.connect();
  await consumer.subscribe({ topics: [opts.topic], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: 3,
    eachMessage: async ({ partition, message }) => {
      const poison = opts.isPoison(message, partition);
      if (poison) self.failures++;
      else
        self.consumed.push({
          partition,
          offset: message.offset,
          key: message.key?.toString("utf8") ?? null,
          value: message.value?.toString("utf8") ?? "",
        });
      for (const w of [...waiters]) {
        if (w.predicate(self.consumed)) {
          waiters.delete(w);
          w.resolve();
        }
      }
      if (poison) throw new Error(`poison record at ${opts.topic}/${partition}@${message.offset}`);
    },
  });
  return self;
}
