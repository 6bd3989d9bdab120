/**
 * What the Pulsar mover asks of the broker, and nothing it decides: read the DLQ in log order,
 * re-read the console subscription's acknowledgements, look a topic up, publish with confirmation,
 * acknowledge. The mover's rules (mover.ts) run against this interface, so they can be tested
 * without a broker; `pulsarLink` is the real one.
 */
import {
  PulsarSocket,
  shortName,
  topicPath,
  type PulsarAdmin,
  type PulsarEndpoint,
  type TopicName,
} from "@/lib/brokers/pulsar/client";
import type { AckState } from "@/lib/brokers/pulsar/message-id";
import { Producer, type OutgoingMessage } from "@/lib/brokers/pulsar/producer";
import { cursorSnapshot, readUnacked, type ReadMessage } from "@/lib/brokers/pulsar/reader";

export interface Publisher {
  /** The new message's id (WebSocket form) once Pulsar confirmed it; rejects with a BrokerError. */
  send(msg: OutgoingMessage): Promise<string>;
  close(): Promise<void>;
}

export interface Acker {
  /** Acknowledges a message id (an entry's id without batch index takes the whole entry). */
  ack(messageId: string): void;
  /** Flushes the acknowledgements. */
  close(): Promise<void>;
}

export interface MoverLink {
  /**
   * The DLQ's messages not acknowledged on the console's subscription, in log order: from the
   * subscription's mark-delete position to the last entry stored when the read began, skipping
   * the ranges it acknowledged by then.
   */
  read(dlq: TopicName, signal?: AbortSignal): AsyncIterable<ReadMessage>;
  /** What the console's subscription has acknowledged on the DLQ now. */
  acked(dlq: TopicName): Promise<AckState>;
  /** The topic exists (partitioned or not). */
  topicExists(t: TopicName): Promise<boolean>;
  producer(t: TopicName): Promise<Publisher>;
  /** Acknowledgements on the console's subscription. */
  acker(dlq: TopicName): Promise<Acker>;
}

export function pulsarLink(ep: PulsarEndpoint, admin: PulsarAdmin, subscription: string): MoverLink {
  return {
    read: (dlq, signal) => readUnacked(ep, admin, dlq, subscription, { signal }),
    acked: async (dlq) => (await cursorSnapshot(admin, dlq, subscription)).acks,
    async topicExists(t) {
      const what = `look up topic ${shortName(t)}`;
      if (await admin.get(`persistent/${topicPath(t)}/stats`, what, { notFound: "null" })) return true;
      return !!(await admin.get(`persistent/${topicPath(t)}/partitioned-stats`, what, { notFound: "null" }));
    },
    producer: (t) => Producer.open(ep, t),
    async acker(dlq) {
      // A Shared consumer in pull mode that asks for no message, so the broker delivers it none: it
      // only carries acknowledgements, and closing it flushes them.
      const socket = await PulsarSocket.open(
        ep,
        `consumer/persistent/${topicPath(dlq)}/${encodeURIComponent(subscription)}?subscriptionType=Shared&pullMode=true`,
        `acknowledge letters on ${shortName(dlq)}`,
      );
      return { ack: (messageId) => socket.send({ messageId }), close: () => socket.close() };
    },
  };
}
