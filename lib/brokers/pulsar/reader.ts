/**
 * Reading a DLQ topic without taking anything from it: a WebSocket reader (a non-durable cursor of
 * its own) from the console subscription's mark-delete position to the last entry stored when the
 * read began, skipping what the subscription already acknowledged. Nothing is acknowledged on the
 * console's subscription and no consumer's redelivery count changes.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import {
  PulsarSocket,
  shortName,
  topicPath,
  type PulsarAdmin,
  type PulsarEndpoint,
  type TopicName,
} from "@/lib/brokers/pulsar/client";
import type { PulsarMessageFrame } from "@/lib/brokers/pulsar/letter";
import {
  AckState,
  comparePositions,
  decodeMessageId,
  encodeMessageId,
  parseAckedRanges,
  parsePosition,
  type MessageId,
  type Position,
} from "@/lib/brokers/pulsar/message-id";

interface InternalStats {
  lastConfirmedEntry?: string;
  numberOfEntries?: number;
  cursors?: Record<string, { markDeletePosition?: string; individuallyDeletedMessages?: string }>;
}

/** What a read starts from: the subscription's acknowledgements and the last stored entry. */
export interface CursorSnapshot {
  /** The console subscription exists. */
  subscribed: boolean;
  acks: AckState;
  last: Position | null;
}

/** The subscription's cursor and the topic's end, from internal stats; `not_found` when the topic does not exist. */
export async function cursorSnapshot(
  admin: PulsarAdmin,
  topic: TopicName,
  subscription: string,
  signal?: AbortSignal,
): Promise<CursorSnapshot> {
  const stats = await admin.get<InternalStats>(
    `persistent/${topicPath(topic)}/internalStats`,
    `read the cursors of topic ${shortName(topic)}`,
    { notFound: "null", signal },
  );
  if (!stats) throw missingTopic(topic);
  const cursor = stats.cursors?.[subscription];
  const last = parsePosition(stats.lastConfirmedEntry);
  const markDelete = parsePosition(cursor?.markDeletePosition) ?? { ledger: -1n, entry: -1n };
  return {
    subscribed: !!cursor,
    acks: new AckState(markDelete, parseAckedRanges(cursor?.individuallyDeletedMessages)),
    last,
  };
}

export function missingTopic(topic: TopicName): BrokerError {
  return new BrokerError("not_found", {
    userMessage: `Topic ${shortName(topic)} does not exist on this Pulsar cluster. It may have been deleted.`,
  });
}

export interface ReadMessage {
  frame: PulsarMessageFrame;
  id: MessageId;
}

/**
 * Every message of the DLQ not acknowledged by the console subscription, in log order, as of the
 * start of the read; with `after` (a whole entry an earlier read ended on), only those stored after
 * it. Bounded memory: one frame at a time (the reader's own queue is small).
 */
export async function* readUnacked(
  ep: PulsarEndpoint,
  admin: PulsarAdmin,
  topic: TopicName,
  subscription: string,
  opts: { signal?: AbortSignal; after?: Position } = {},
): AsyncGenerator<ReadMessage> {
  const snap = await cursorSnapshot(admin, topic, subscription, opts.signal);
  // Read from after the subscription's mark-delete position, or after `opts.after` when that is further.
  let from: Position | null = snap.subscribed && snap.acks.markDelete.ledger >= 0n ? snap.acks.markDelete : null;
  if (opts.after && opts.after.ledger >= 0n && (!from || comparePositions(opts.after, from) > 0)) from = opts.after;
  if (!snap.last || comparePositions(snap.last, from ?? snap.acks.markDelete) <= 0) return;
  // A reader started at a message id reads from the entry after it; without one, from the oldest stored.
  const start = from ? encodeMessageId(from) : "earliest";
  const socket = await PulsarSocket.open(
    ep,
    `reader/persistent/${topicPath(topic)}?messageId=${encodeURIComponent(start)}&receiverQueueSize=200`,
    `read topic ${shortName(topic)}`,
  );
  try {
    for (;;) {
      if (opts.signal?.aborted) return;
      const f = await socket.next(ep.timeoutMs, opts.signal);
      if (!f) {
        if (opts.signal?.aborted) return;
        if (socket.endedWith) throw socket.closedError();
        throw new BrokerError("protocol", {
          userMessage: `Pulsar stopped sending letters of ${shortName(topic)} before the last one stored when the read began (${snap.last.ledger}:${snap.last.entry}). The letters may have been deleted by retention meanwhile; retry.`,
        });
      }
      if (typeof f.messageId !== "string") continue;
      socket.send({ messageId: f.messageId });
      const id = decodeMessageId(f.messageId);
      const beyond = comparePositions(id, snap.last);
      if (beyond > 0) return;
      if (!snap.acks.isAcked(id)) yield { frame: f as unknown as PulsarMessageFrame, id };
      // The last entry may be a batch: keep reading its messages until one past it.
      if (beyond === 0 && !(id.batchSize > 0 && id.batchIndex < id.batchSize - 1)) return;
    }
  } finally {
    await socket.close();
  }
}
