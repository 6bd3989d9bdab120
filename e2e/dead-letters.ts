import { expect } from "@playwright/test";
import amqp from "amqplib";

const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** A suffix that keeps one run's queues apart from every other run's. */
export const runId = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/**
 * A work queue dead-lettering into a DLQ (through a DLX), made for one spec run: `e2e.<name>.<run>`,
 * its `.dlq`, and `e2e.<name>.dlx.<run>`. Call `fill` in beforeAll and `remove` in afterAll.
 */
export function deadLetterQueues(name: string, run: string) {
  const work = `e2e.${name}.${run}`;
  const dlq = `${work}.dlq`;
  const dlx = `e2e.${name}.dlx.${run}`;
  let conn: amqp.ChannelModel | undefined;

  return {
    work,
    dlq,
    /** Publishes the letters to the work queue and fails each one (nack, requeue=false), so RabbitMQ dead-letters them for real ("rejected"); returns once all are in the DLQ. */
    async fill(letters: Array<{ content: Buffer; options: amqp.Options.Publish }>) {
      conn = await amqp.connect(URL);
      const ch = await conn.createConfirmChannel();
      await ch.assertExchange(dlx, "direct", { durable: false, autoDelete: false });
      await ch.assertQueue(dlq, { durable: true });
      await ch.bindQueue(dlq, dlx, dlq);
      await ch.assertQueue(work, {
        durable: true,
        arguments: { "x-dead-letter-exchange": dlx, "x-dead-letter-routing-key": dlq },
      });
      for (const l of letters) ch.sendToQueue(work, l.content, l.options);
      await ch.waitForConfirms();
      const n = letters.length;
      const consumer = await conn.createChannel();
      await consumer.prefetch(n);
      let seen = 0;
      await new Promise<void>((resolve) => {
        void consumer.consume(work, (m) => {
          if (!m) return;
          consumer.nack(m, false, false);
          if (++seen === n) resolve();
        });
      });
      await consumer.close();
      for (let i = 0; i < 200 && (await ch.checkQueue(dlq)).messageCount < n; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect((await ch.checkQueue(dlq)).messageCount).toBe(n);
      await ch.close();
    },
    /** Messages ready in `queue`. */
    async depth(queue: string): Promise<number> {
      const ch = await conn!.createChannel();
      try {
        return (await ch.checkQueue(queue)).messageCount;
      } finally {
        await ch.close();
      }
    },
    /** A channel on the run's connection, for a test's own look at a queue; close it after. */
    channel: () => conn!.createChannel(),
    async remove() {
      if (!conn) return;
      const ch = await conn.createChannel();
      await ch.deleteQueue(work).catch(() => undefined);
      await ch.deleteQueue(dlq).catch(() => undefined);
      await ch.deleteExchange(dlx).catch(() => undefined);
      await conn.close().catch(() => undefined);
    },
  };
}
