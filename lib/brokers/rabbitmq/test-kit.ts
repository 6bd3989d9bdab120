/**
 * Test and script helpers that make real dead letters on a real RabbitMQ: publish to a work
 * queue whose dead-letter target is the DLQ, then reject, expire or overflow. Never used by the app.
 */
import amqp, { type ChannelModel, type ConfirmChannel, type Options } from "amqplib";
import { type RabbitConnectionConfig, vhostPath } from "@/lib/config";
import type { ContractLetterInput } from "@/lib/brokers/contract-suite/read";

/**
 * The machine's RabbitMQ by default. DLQ_TEST_AMQP_PORT / DLQ_TEST_RABBITMQ_MGMT_PORT point the
 * kit at another local node (e.g. a private one for the fault tests, which stop the broker).
 * RABBITMQ_VHOST, which also moves the default config's `local-rabbitmq` there (lib/config.ts), is
 * the vhost: scripts/test.sh gives the integration tests one of their own (docs/testing.md).
 */
const AMQP_PORT = process.env.DLQ_TEST_AMQP_PORT ?? "5672";
export const TEST_VHOST = process.env.RABBITMQ_VHOST || "/";
/** Where the kit's queues live, for a config of a test's own: no credentials (guest is the default). */
export const TEST_AMQP_URL = `amqp://127.0.0.1:${AMQP_PORT}${vhostPath(TEST_VHOST)}`;
export const AMQP_URL = `amqp://guest:guest@127.0.0.1:${AMQP_PORT}${vhostPath(TEST_VHOST)}`;
export const MGMT_URL = `http://127.0.0.1:${process.env.DLQ_TEST_RABBITMQ_MGMT_PORT ?? "15672"}`;
/** TEST_AMQP_URL through another port on this machine (a test's TCP proxy in front of the node). */
export function testAmqpUrlVia(port: number): string {
  const url = new URL(TEST_AMQP_URL);
  url.port = String(port);
  return url.toString();
}
/** The vhost as a management API path segment: `api/queues/${VHOST}/…`. */
export const VHOST = encodeURIComponent(TEST_VHOST);

export function testConfig(over: Partial<RabbitConnectionConfig> = {}): RabbitConnectionConfig {
  return {
    kind: "rabbitmq",
    id: "test-rabbitmq",
    name: "Test RabbitMQ",
    url: TEST_AMQP_URL,
    management: { url: MGMT_URL },
    discover: true,
    dlqs: [],
    ...over,
  };
}

export async function mgmtRequest(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${MGMT_URL}/${path}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from("guest:guest").toString("base64")}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export class RabbitKit {
  private conn: ChannelModel | null = null;
  private ch: ConfirmChannel | null = null;
  readonly queues = new Set<string>();
  readonly exchanges = new Set<string>();
  readonly policies = new Set<string>();
  private n = 0;

  constructor(readonly prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`) {}

  name(label: string) {
    return `${this.prefix}.${label}.${++this.n}`;
  }

  async channel(): Promise<ConfirmChannel> {
    if (this.ch) return this.ch;
    this.conn = await amqp.connect(AMQP_URL);
    this.conn.on("error", () => undefined);
    this.ch = await this.conn.createConfirmChannel();
    this.ch.on("error", () => undefined);
    return this.ch;
  }

  async queue(name: string, args: Record<string, unknown> = {}, opts: Options.AssertQueue = {}) {
    const ch = await this.channel();
    await ch.assertQueue(name, { durable: true, ...opts, arguments: args });
    this.queues.add(name);
    return name;
  }

  async exchange(name: string, type = "direct") {
    const ch = await this.channel();
    await ch.assertExchange(name, type, { durable: true });
    this.exchanges.add(name);
    return name;
  }

  async publish(queue: string, l: ContractLetterInput & { props?: Options.Publish }) {
    const ch = await this.channel();
    ch.sendToQueue(queue, Buffer.from(l.body), {
      persistent: true,
      messageId: l.messageId,
      headers: l.headers,
      ...l.props,
    });
    await ch.waitForConfirms();
  }

  async depth(queue: string): Promise<number> {
    const ch = await this.channel();
    return (await ch.checkQueue(queue)).messageCount;
  }

  async waitDepth(queue: string, n: number, timeoutMs = 15_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const d = await this.depth(queue);
      if (d === n) return;
      if (Date.now() > until) throw new Error(`${queue}: depth ${d}, expected ${n}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * The `expected` letters of `queue`, read without taking them: consumed without ack on a
   * connection of its own, which is then closed, so they go back in order.
   */
  async peek(queue: string, expected: number): Promise<amqp.ConsumeMessage[]> {
    await this.waitDepth(queue, expected);
    const out: amqp.ConsumeMessage[] = [];
    if (expected === 0) return out;
    const conn = await amqp.connect(AMQP_URL);
    conn.on("error", () => undefined);
    try {
      const ch = await conn.createChannel();
      await new Promise<void>((resolve) => {
        void ch.consume(queue, (m) => {
          if (m) out.push(m);
          if (out.length === expected) resolve();
        });
      });
    } finally {
      await conn.close().catch(() => undefined);
    }
    return out;
  }

  /** Consumes `count` letters from `queue` and nacks them without requeue: RabbitMQ dead-letters them (reason rejected). */
  async rejectAll(queue: string, count: number) {
    const conn = await amqp.connect(AMQP_URL);
    conn.on("error", () => undefined);
    const ch = await conn.createChannel();
    ch.on("error", () => undefined);
    await ch.prefetch(1);
    let seen = 0;
    await new Promise<void>((resolve) => {
      if (count === 0) return resolve();
      void ch.consume(queue, (m) => {
        if (!m) return;
        ch.nack(m, false, false);
        if (++seen === count) resolve();
      });
    });
    // Closing the channel first makes the broker process the last nack before the connection goes.
    await ch.close();
    await conn.close();
  }

  /** A fresh DLQ filled in order by rejecting letters from a work queue whose DLX is the default exchange. */
  async dlqByReject(
    letters: ContractLetterInput[],
    dlqArgs: Record<string, unknown> = {},
  ): Promise<{ dlq: string; source: string }> {
    const dlq = await this.queue(this.name("dlq"), dlqArgs);
    const source = await this.queue(this.name("work"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
    });
    for (const l of letters) await this.publish(source, l);
    await this.rejectAll(source, letters.length);
    await this.waitDepth(dlq, letters.length);
    return { dlq, source };
  }

  async cleanup() {
    const ch = await this.channel().catch(() => null);
    for (const q of this.queues) await ch?.deleteQueue(q).catch(() => undefined);
    for (const e of this.exchanges) await ch?.deleteExchange(e).catch(() => undefined);
    for (const p of this.policies)
      await mgmtRequest("DELETE", `api/policies/${VHOST}/${encodeURIComponent(p)}`).catch(() => undefined);
    await this.conn?.close().catch(() => undefined);
    this.conn = null;
    this.ch = null;
  }
}

/**
 * Takes every letter out of a queue (consume and ack) on a connection of its own (so it works
 * after a broker restart): message id, replay id and redrive id of each copy, for conservation counts.
 */
export async function drainRedriven(
  queue: string,
): Promise<Array<{ messageId: string; replayId: string | null; redriveId: string | null }>> {
  const conn = await amqp.connect(AMQP_URL);
  try {
    const ch = await conn.createChannel();
    const expected = (await ch.checkQueue(queue)).messageCount;
    await ch.prefetch(1000);
    const out: Array<{ messageId: string; replayId: string | null; redriveId: string | null }> = [];
    await new Promise<void>((resolve) => {
      if (expected === 0) return resolve();
      void ch.consume(queue, (m) => {
        if (!m) return;
        const h = m.properties.headers ?? {};
        out.push({
          messageId: String(m.properties.messageId),
          replayId: h["x-dlq-replay-id"] ? String(h["x-dlq-replay-id"]) : null,
          redriveId: h["x-dlq-redrive-id"] ? String(h["x-dlq-redrive-id"]) : null,
        });
        ch.ack(m);
        if (out.length === expected) resolve();
      });
    });
    return out;
  } finally {
    await conn.close().catch(() => undefined);
  }
}
