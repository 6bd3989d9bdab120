/** What the redrive benchmarks share: filling a DLQ, and the bare loop every mover is measured against. */
import type amqp from "amqplib";

export const BENCH_BODY = Buffer.alloc(1024, "x");

/** A fresh durable queue with n persistent 1 KB letters, message ids b-0, b-1, … */
export async function fill(ch: amqp.ConfirmChannel, queue: string, n: number, headers?: Record<string, string>) {
  await ch.deleteQueue(queue);
  await ch.assertQueue(queue, { durable: true });
  for (let i = 0; i < n; i += 1000) {
    for (let j = i; j < Math.min(n, i + 1000); j++)
      ch.sendToQueue(queue, BENCH_BODY, { persistent: true, messageId: `b-${j}`, headers });
    await ch.waitForConfirms();
  }
}

/**
 * The bare loop: consume (prefetch 1000) → confirm-publish to `<dlq>.target` → ack after the
 * confirm, until n letters moved; letters per second.
 */
export async function bareMove(
  conn: amqp.ChannelModel,
  ch: amqp.ConfirmChannel,
  dlq: string,
  n: number,
): Promise<number> {
  await ch.assertQueue(`${dlq}.target`, { durable: true });
  const cch = await conn.createChannel();
  await cch.prefetch(1000);
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    let done = 0;
    void cch.consume(dlq, (m) => {
      if (!m) return;
      ch.sendToQueue(`${dlq}.target`, m.content, m.properties, (err) => {
        if (err) throw err;
        cch.ack(m);
        if (++done === n) resolve();
      });
    });
  });
  const rate = n / ((performance.now() - t0) / 1000);
  await cch.close();
  return rate;
}
