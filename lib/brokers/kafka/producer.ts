/**
 * The mover's transport to Kafka: redrive's shared producer (idempotent, acks=all), the metadata
 * check before each send, and a produce failure in the operator's words. What is produced, and
 * when, is the mover's (mover.ts); this file only publishes with confirmation.
 */
import type { Message, Producer, RecordMetadata } from "kafkajs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type { InternalProducerCluster } from "@/lib/brokers/kafka/client";

/** What `lazyProducer` is given: kafkajs's producer and its internal cluster (`createProducerWithCluster`). */
export interface ProducerHandle {
  producer: Producer;
  cluster: InternalProducerCluster;
}

/**
 * Redrive's producer (idempotent, acks=all; the adapter configures it), connected on first use and
 * shared by every move and undo of the adapter, several at once.
 * - `send` first makes the producer's metadata ready for the topic (`readyFor`: Metadata requests
 *   only), then hands the record to kafkajs once. A send that fails is not sent again here: kafkajs
 *   retries a Produce itself with the same producer id and sequence numbers, which the broker
 *   deduplicates, but a second `send` of the same record would get new ones and could make a
 *   duplicate when the first one's outcome is unknown.
 * - `close` stops handing out the producer, waits for the sends in flight on it to settle, then
 *   disconnects it: a disconnect under a send could lose the acknowledgement of a record written.
 */
export function lazyProducer(create: () => ProducerHandle) {
  interface Current {
    ready: Promise<ProducerHandle>;
    sends: Set<Promise<unknown>>;
  }
  let cur: Current | null = null;
  const current = (): Current => {
    if (cur) return cur;
    const c: Current = {
      // Deferred so that `cur` is set before a failure can clear it.
      ready: Promise.resolve().then(async () => {
        const h = create();
        await h.producer.connect();
        return h;
      }),
      sends: new Set(),
    };
    c.ready.catch(() => {
      if (cur === c) cur = null;
    });
    cur = c;
    return c;
  };
  return {
    /** Produces one record to `topic` (acks=all); resolves with kafkajs's metadata once the broker acknowledged it. */
    async send(topic: string, message: Message): Promise<RecordMetadata[]> {
      const c = current();
      const sending = (async () => {
        const { producer, cluster } = await c.ready;
        await readyFor(cluster, topic);
        return producer.send({ topic, acks: -1, messages: [message] });
      })();
      c.sends.add(sending);
      try {
        return await sending;
      } finally {
        c.sends.delete(sending);
      }
    },
    async close() {
      const c = cur;
      cur = null;
      if (!c) return;
      await Promise.allSettled([...c.sends]);
      await c.ready.then((h) => h.producer.disconnect()).catch(() => undefined);
    },
  };
}

const isUnknownTopic = (e: unknown) => errorChain(e).some((l) => l.type === "UNKNOWN_TOPIC_OR_PARTITION");
const unknownTopic = (topic: string) =>
  Object.assign(new Error(`Topic ${topic} is not in the broker's metadata`), { type: "UNKNOWN_TOPIC_OR_PARTITION" });

/**
 * Makes a producer's metadata ready for a send to `topic`, before kafkajs is given the record.
 * kafkajs refreshes a client's metadata for every topic it was ever given (its target topics); once
 * someone else deletes one of them, each refresh fails with UNKNOWN_TOPIC_OR_PARTITION whatever topic
 * is asked, so one deleted topic would fail every send to a topic new to the producer, and to every
 * topic once the metadata is older than metadataMaxAge. As topics.ts's `onTopic` does for reading:
 * on an unknown topic, the target topics missing from a fresh list of all topics are dropped (under
 * kafkajs's own lock on them), the metadata is refreshed, and the check runs once more. Only
 * Metadata requests are made here: repeating them produces nothing. A `topic` that is itself gone
 * throws an UNKNOWN_TOPIC_OR_PARTITION error (produceFailure: "does not exist (any more)").
 */
export async function readyFor(c: InternalProducerCluster, topic: string): Promise<void> {
  const check = async () => {
    await c.addTargetTopic(topic);
    await c.refreshMetadataIfNecessary();
    // Every topic has a partition: none means the metadata does not know the topic.
    if (!c.findTopicPartitionMetadata(topic).length) throw unknownTopic(topic);
  };
  try {
    return await check();
  } catch (e) {
    if (!isUnknownTopic(e)) throw e;
  }
  const existing = new Set((await c.metadata()).topicMetadata.map((t) => t.topic));
  if (!existing.has(topic)) throw unknownTopic(topic);
  // Held across the refresh, as kafkajs holds it when it adds a topic: no add can put a dropped
  // topic back meanwhile, and the refresh cannot join one started with the old list by an add.
  await c.mutatingTargetTopics.acquire();
  try {
    for (const t of [...c.targetTopics]) if (!existing.has(t)) c.targetTopics.delete(t);
    await c.refreshMetadata();
  } finally {
    await c.mutatingTargetTopics.release();
  }
  await check();
}

/** kafkajs nests the real cause under `originalError` / `retriableError` / `cause`. */
export function errorChain(e: unknown): Array<{ name?: string; type?: string; message?: string }> {
  const out: Array<{ name?: string; type?: string; message?: string }> = [];
  let cur = e as Record<string, unknown> | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 8; i++) {
    out.push(cur as { name?: string; type?: string; message?: string });
    cur = (cur.originalError ?? cur.retriableError ?? cur.cause) as Record<string, unknown> | undefined;
  }
  return out;
}

/** A produce failure in the operator's words; `stop` when the broker is unreachable. */
export function produceFailure(
  e: unknown,
  topic: string,
  bytes: number,
  mapError: (e: unknown, topic?: string) => BrokerError,
): { reason: string; stop: BrokerError | null } {
  const links = errorChain(e);
  const type = links.map((l) => l.type).find((t) => t && t !== "UNKNOWN");
  const detail = links.map((l) => l.message).filter(Boolean)[0] ?? String(e);
  if (type === "MESSAGE_TOO_LARGE" || type === "RECORD_LIST_TOO_LARGE") {
    return {
      reason: `Topic "${topic}" refused the letter as too large (${bytes} bytes; ${type}). Raise the topic's max.message.bytes, or move it to a topic that accepts it. It is still in the DLT.`,
      stop: null,
    };
  }
  if (
    type === "TOPIC_AUTHORIZATION_FAILED" ||
    type === "CLUSTER_AUTHORIZATION_FAILED" ||
    type === "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
  ) {
    return {
      reason: `The console may not write to topic "${topic}" (${type}). Grant its principal Write on the topic (and IdempotentWrite on the cluster for older brokers). It is still in the DLT.`,
      stop: null,
    };
  }
  if (type === "UNKNOWN_TOPIC_OR_PARTITION") {
    return { reason: `Topic "${topic}" does not exist (any more). It is still in the DLT.`, stop: null };
  }
  if (type === "INVALID_RECORD" || type === "CORRUPT_MESSAGE" || type === "INVALID_TIMESTAMP") {
    return { reason: `Topic "${topic}" refused the letter (${type}: ${detail}). It is still in the DLT.`, stop: null };
  }
  const mapped = mapError(e, topic);
  if (mapped.kind === "unreachable")
    return {
      reason: `${mapped.userMessage} The letter was not confirmed by "${topic}" and is still in the DLT.`,
      stop: mapped,
    };
  return {
    reason: `Publishing to topic "${topic}" failed${type ? ` (${type})` : ""}: ${detail}. It is still in the DLT.`,
    stop: null,
  };
}
