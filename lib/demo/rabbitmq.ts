/**
 * The hostile corpus (lib/demo/hostile-corpus.ts) in demo.hostile.dlq on the local RabbitMQ, by
 * real dead-lettering: published to demo.hostile with the corpus as headers (one header name is
 * markup) and Spring AMQP's x-exception-* headers, then rejected by a consumer (x-death "rejected").
 * Its own dead-letter exchange, so it can be re-seeded without touching the other demo queues.
 * Idempotent: the queues are deleted and recreated.
 */
import amqp from "amqplib";
import { HOSTILE_DLQS, HOSTILE_EXCEPTION, HOSTILE_LETTERS, HOSTILE_NAMED_DLQ } from "./hostile-corpus";

export const RABBITMQ_DEMO_URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const DLX = "demo.hostile.dlx";

export async function seedRabbitHostile(url = RABBITMQ_DEMO_URL): Promise<Record<string, number>> {
  const { source, dlq } = HOSTILE_DLQS.rabbitmq;
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createConfirmChannel();
    await ch.deleteQueue(source);
    await ch.deleteQueue(dlq);
    await ch.assertExchange(DLX, "direct", { durable: true });
    await ch.assertQueue(dlq, { durable: true });
    await ch.bindQueue(dlq, DLX, dlq);
    await ch.assertQueue(source, {
      durable: true,
      arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": dlq },
    });
    const stack = `${HOSTILE_EXCEPTION.className}: ${HOSTILE_EXCEPTION.message}\n\tat com.acme.hostile.Renderer.render(Renderer.java:13)`;
    for (const l of HOSTILE_LETTERS) {
      ch.sendToQueue(source, Buffer.from(l.body), {
        persistent: true,
        messageId: l.label,
        contentType: l.contentType,
        appId: "demo-seed",
        timestamp: Math.floor(Date.now() / 1000),
        headers: {
          ...l.headers,
          ...l.extraHeaders,
          ...l.secretHeaders,
          "x-exception-message": HOSTILE_EXCEPTION.message,
          "x-exception-stacktrace": stack,
        },
      });
    }
    await ch.waitForConfirms();

    // A consumer that rejects everything: RabbitMQ dead-letters each letter with reason "rejected".
    const consumer = await conn.createChannel();
    await consumer.prefetch(10);
    let seen = 0;
    await new Promise<void>((resolve) => {
      void consumer.consume(source, (m) => {
        if (!m) return;
        consumer.nack(m, false, false);
        if (++seen === HOSTILE_LETTERS.length) resolve();
      });
    });
    await consumer.close();
    for (let i = 0; i < 200 && (await ch.checkQueue(dlq)).messageCount < HOSTILE_LETTERS.length; i++)
      await new Promise((r) => setTimeout(r, 50));

    // A DLQ whose very name is markup, with one letter dead-lettered into it the same way.
    const named = HOSTILE_NAMED_DLQ;
    await ch.deleteQueue(named.source);
    await ch.deleteQueue(named.dlq);
    await ch.assertQueue(named.dlq, { durable: true });
    await ch.bindQueue(named.dlq, DLX, named.dlq);
    await ch.assertQueue(named.source, {
      durable: true,
      arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": named.dlq },
    });
    ch.sendToQueue(named.source, Buffer.from("a letter in a DLQ whose name is markup"), {
      persistent: true,
      messageId: "hostile-named",
      contentType: "text/plain",
    });
    await ch.waitForConfirms();
    const m = await ch.get(named.source, { noAck: false });
    if (m) ch.nack(m, false, false);
    for (let i = 0; i < 200 && (await ch.checkQueue(named.dlq)).messageCount < 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    return {
      [dlq]: (await ch.checkQueue(dlq)).messageCount,
      [named.dlq]: (await ch.checkQueue(named.dlq)).messageCount,
    };
  } finally {
    await conn.close();
  }
}
