/**
 * The RabbitMQ fixture of the shared redrive, remove and repair contracts, and the peek helpers its
 * tests read queues with. It lives outside the test files because importing a test file would
 * register (and run) its suites a second time in the importing file. Never used by the app.
 */
import amqp, { type ConsumeMessage } from "amqplib";
import type { ArrivedLetter, RedriveContractFixture, RedriveDestination } from "@/lib/brokers/contract-suite/redrive";
import type { AdapterSetup } from "@/lib/brokers/contract/adapter";
import type { Letter } from "@/lib/brokers/contract/letter";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { installRawHeaderHook } from "@/lib/brokers/rabbitmq/raw-headers";

/** Every letter in `queue`, in order, without taking any away (consume without ack, then close), with raw properties. */
export async function peek(queue: string): Promise<ConsumeMessage[]> {
  const conn = await amqp.connect(AMQP_URL);
  conn.on("error", () => undefined);
  installRawHeaderHook(conn);
  const ch = await conn.createChannel();
  ch.on("error", () => undefined);
  try {
    const n = (await ch.checkQueue(queue)).messageCount;
    if (n === 0) return [];
    await ch.prefetch(n);
    const got: ConsumeMessage[] = [];
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 2000);
      void ch.consume(queue, (m) => {
        if (m) got.push(m);
        if (got.length >= n) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    return got;
  } finally {
    await ch.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  }
}

function headerString(v: unknown): string {
  if (Buffer.isBuffer(v)) return v.toString("utf8");
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

export function arrived(m: ConsumeMessage): ArrivedLetter {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries((m.properties.headers ?? {}) as Record<string, unknown>))
    headers[k] = headerString(v);
  return {
    body: new Uint8Array(m.content),
    headers,
    messageId: typeof m.properties.messageId === "string" ? m.properties.messageId : null,
  };
}

export const destination = (name: string): RedriveDestination => ({
  name,
  read: async () => (await peek(name)).map(arrived),
});

/**
 * Takes this letter out of `queue` as another consumer would: basic.get in queue order until it
 * comes, ack it; the letters got before it go back to their places when the channel closes. A
 * letter delivered to someone else and not acked (a running move's) is not there to get: false.
 */
export async function takeAway(queue: string, letter: Letter): Promise<boolean> {
  const conn = await amqp.connect(AMQP_URL);
  conn.on("error", () => undefined);
  const ch = await conn.createChannel();
  ch.on("error", () => undefined);
  try {
    for (;;) {
      const m = await ch.get(queue, { noAck: false });
      if (!m) return false;
      const sameId = letter.messageId === null || m.properties.messageId === letter.messageId;
      if (sameId && m.content.equals(Buffer.from(letter.body))) {
        ch.ack(m);
        return true;
      }
    }
  } finally {
    // Closing the channel after the ack makes the broker apply it and requeue the rest in place.
    await ch.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  }
}

/**
 * The RabbitMQ fixture of the redrive, remove and repair contracts (repair.integration.test.ts).
 * The managed header names come from the test (lib/connections' union of every adapter's), since
 * this file, in a broker's folder, may import no other broker's (lib/layout.test.ts).
 */
export const contractFixtureWith = (setup: AdapterSetup) => async (): Promise<RedriveContractFixture> => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig(), { ...setup, idleMs: 500 });
  const sources = new Map<string, string>();
  return {
    adapter,
    createDlq: async (letters) => {
      const { dlq, source } = await kit.dlqByReject(letters);
      sources.set(dlq, source);
      return dlq;
    },
    originOf: (dlq) => destination(sources.get(dlq)!),
    createQueue: async () => destination(await kit.queue(kit.name("target"))),
    deadLetterAgain: async (dlq) => {
      const source = sources.get(dlq)!;
      const n = await kit.depth(source);
      const before = await kit.depth(dlq);
      await kit.rejectAll(source, n);
      await kit.waitDepth(dlq, before + n);
    },
    deadLetterMore: async (dlq, letters) => {
      const source = sources.get(dlq)!;
      for (const l of letters) await kit.publish(source, l);
      await kit.rejectAll(source, letters.length);
    },
    takeAway,
    cleanup: async () => {
      await adapter.close();
      await kit.cleanup();
    },
    removesFromDlq: true,
    orderingKeys: false,
    // Letters without a message_id are identified by content and told apart by their order.
    twins: true,
  };
};
