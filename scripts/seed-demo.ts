/**
 * Seeds demo dead letters into the local RabbitMQ by REAL dead-lettering (reject, TTL expiry,
 * max-length overflow, quorum delivery limit) plus Spring AMQP-style republishing, and into SQS and
 * Kafka and Pulsar when they answer; plus one DLQ per broker holding the hostile-content corpus
 * (lib/demo/hostile-corpus.ts). Idempotent: every demo queue is deleted and recreated.
 * `npm run seed:demo`; `npm run seed:demo -- --only=hostile` re-seeds only the hostile DLQs.
 * RABBITMQ_URL, SQS_ENDPOINT and KAFKA_BROKERS override the brokers.
 */
import amqp, { type Channel, type ConfirmChannel } from "amqplib";
import { SQS_DEMO_ENDPOINT, seedSqsDemo, seedSqsHostile, sqsAnswers } from "../lib/demo/sqs";
import {
  KAFKA_DEMO_BROKERS,
  kafkaAnswers,
  seedKafkaDemo,
  seedKafkaHostile,
  seedKafkaStuckGroup,
} from "../lib/demo/kafka";
import { seedRabbitHostile } from "../lib/demo/rabbitmq";
import { PULSAR_ADMIN_URL } from "../lib/brokers/pulsar/test-kit";
import { pulsarAnswers, seedPulsarDemo, seedPulsarHostile } from "../lib/demo/pulsar";

const URL = process.env.RABBITMQ_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const DLX = "demo.dlx";

const text = (s: string) => Buffer.from(s, "utf8");
const json = (v: unknown) => Buffer.from(JSON.stringify(v), "utf8");

function nested(depth: number): unknown {
  return depth === 0 ? { leaf: true, values: [1, 2, 3] } : { level: depth, child: nested(depth - 1) };
}

function stack(cls: string, msg: string, frames: string[]) {
  return [`${cls}: ${msg}`, ...frames.map((f) => `\tat ${f}`)].join("\n");
}

interface Letter {
  body: Buffer;
  messageId?: string;
  contentType?: string;
  headers?: Record<string, unknown>;
}

async function waitDepth(ch: Channel, q: string, n: number) {
  for (let i = 0; i < 400; i++) {
    if ((await ch.checkQueue(q)).messageCount >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${q} did not reach ${n} letters`);
}

/** Consumes n letters and nacks them (requeue=false → dead-lettered, reason "rejected"; requeue=true → redelivered). */
async function nackAll(
  conn: amqp.ChannelModel,
  q: string,
  n: number,
  requeue: boolean,
  until?: () => Promise<boolean>,
) {
  const ch = await conn.createChannel();
  await ch.prefetch(10);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void ch.consume(q, (m) => {
      if (!m) return;
      ch.nack(m, false, requeue);
      if (!requeue && ++seen === n) resolve();
    });
    if (requeue && until) {
      const tick = async () => ((await until()) ? resolve() : setTimeout(tick, 50));
      void tick();
    }
  });
  await ch.close();
}

const print = (counts: Record<string, number>) => {
  for (const [q, n] of Object.entries(counts)) console.log(`  ${q.padEnd(24)} ${String(n).padStart(3)} letters`);
};

/** The hostile corpus on every broker that answers. */
async function seedHostile() {
  console.log("Hostile-content corpus (lib/demo/hostile-corpus.ts):");
  print(await seedRabbitHostile(URL));
  if (await sqsAnswers()) print(await seedSqsHostile());
  else console.log(`  no SQS server at ${SQS_DEMO_ENDPOINT}: skipped`);
  if (await kafkaAnswers()) print(await seedKafkaHostile(KAFKA_DEMO_BROKERS));
  else console.log(`  no Kafka broker at ${KAFKA_DEMO_BROKERS.join(",")}: skipped`);
  if (await pulsarAnswers()) print(await seedPulsarHostile());
  else console.log(`  no Pulsar at ${PULSAR_ADMIN_URL}: skipped`);
}

async function main() {
  if (process.argv.includes("--only=hostile")) return seedHostile();
  const conn = await amqp.connect(URL);
  conn.on("error", (e) => console.error(`connection error: ${e.message}`));
  const ch: ConfirmChannel = await conn.createConfirmChannel();

  const queues = [
    "demo.orders",
    "demo.orders.dlq",
    "demo.payments",
    "demo.payments.dlq",
    "demo.inventory",
    "demo.inventory.dlq",
    "demo.notifications",
    "demo.notifications.dlq",
    "demo.shipping",
    "demo.shipping.dlq",
    "demo.shipping.dlq.safe",
    "demo.billing",
    "demo.billing.dlq",
  ];
  for (const q of queues) await ch.deleteQueue(q);
  await ch.deleteExchange(DLX);
  await ch.assertExchange(DLX, "direct", { durable: true });

  const dlq = async (name: string, args: Record<string, unknown> = {}) => {
    await ch.assertQueue(name, { durable: true, arguments: args });
    await ch.bindQueue(name, DLX, name);
  };
  const work = async (name: string, target: string, args: Record<string, unknown> = {}) =>
    ch.assertQueue(name, {
      durable: true,
      arguments: { "x-dead-letter-exchange": DLX, "x-dead-letter-routing-key": target, ...args },
    });
  const publish = async (q: string, letters: Letter[], extra: amqp.Options.Publish = {}) => {
    for (const l of letters)
      ch.sendToQueue(q, l.body, {
        persistent: true,
        messageId: l.messageId,
        contentType: l.contentType,
        headers: l.headers,
        timestamp: Math.floor(Date.now() / 1000),
        appId: "demo-seed",
        ...extra,
      });
    await ch.waitForConfirms();
  };

  // demo.orders: a consumer rejects (nack, requeue=false) → reason "rejected". Every kind of awkward payload.
  await dlq("demo.orders.dlq");
  await work("demo.orders", "demo.orders.dlq");
  const many: Record<string, string> = {};
  for (let i = 0; i < 300; i++) many[`x-trace-attr-${String(i).padStart(3, "0")}`] = `value-${i}`;
  const big = Buffer.alloc(5 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = 0x61 + (i % 26);
  const orders: Letter[] = [
    {
      body: json({ orderId: 1001, customer: "c-77", total: "129.90", currency: "EUR" }),
      messageId: "order-1001",
      contentType: "application/json",
    },
    {
      body: json({ orderId: 1002, customer: null, total: "15.00" }),
      messageId: "order-1002",
      contentType: "application/json",
    },
    { body: text("ORDER 1003 qty=2 sku=AB-12 (plain text)"), contentType: "text/plain" },
    {
      body: Buffer.from([0x08, 0x96, 0x01, 0x12, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0xff]),
      contentType: "application/x-protobuf",
      messageId: "order-1004-binary",
    },
    {
      body: Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xa0, 0xa1, 0x22, 0x7d]),
      contentType: "application/json",
      messageId: "order-1005-bad-utf8",
    },
    { body: big, contentType: "text/plain", messageId: "order-1006-5mb" },
    {
      body: json({ orderId: 1007, note: "<b>bold</b>" }),
      contentType: "application/json",
      messageId: "order-1007-html-headers",
      headers: {
        "x-customer-note": "<script>alert('xss')</script>",
        "x-link": "javascript:alert(1)",
        "x-rtl": "invoice\u202Efdp.exe",
        "x-zero-width": "ad\u200Bmin",
      },
    },
    {
      body: json({ orderId: 1008 }),
      contentType: "application/json",
      messageId: "order-1008-many-headers",
      headers: many,
    },
    { body: json(nested(60)), contentType: "application/json", messageId: "order-1009-deep-json" },
    { body: json({ orderId: 1010, retry: true }), contentType: "application/json" },
    { body: json({ orderId: 1010, retry: true }), contentType: "application/json" }, // identical twin, no message id
  ];
  await publish("demo.orders", orders);
  await nackAll(conn, "demo.orders", orders.length, false);

  // demo.payments: per-message TTL expires → reason "expired".
  await dlq("demo.payments.dlq");
  await work("demo.payments", "demo.payments.dlq");
  await publish(
    "demo.payments",
    [1, 2, 3].map((i) => ({
      body: json({ paymentId: `p-${i}`, amount: i * 10 }),
      messageId: `payment-${i}`,
      contentType: "application/json",
    })),
    { expiration: "1" },
  );

  // demo.inventory: max-length 3 overflows → reason "maxlen" for the oldest.
  await dlq("demo.inventory.dlq");
  await work("demo.inventory", "demo.inventory.dlq", { "x-max-length": 3 });
  await publish(
    "demo.inventory",
    [1, 2, 3, 4, 5, 6, 7].map((i) => ({ body: json({ sku: `SKU-${i}`, delta: -i }), contentType: "application/json" })),
  );

  // demo.notifications: quorum queue with delivery limit 2, a consumer keeps requeueing → reason "delivery_limit".
  await dlq("demo.notifications.dlq");
  await work("demo.notifications", "demo.notifications.dlq", { "x-queue-type": "quorum", "x-delivery-limit": 2 });
  await publish(
    "demo.notifications",
    [1, 2].map((i) => ({
      body: json({ to: `user${i}@example.com`, template: "welcome" }),
      contentType: "application/json",
    })),
  );
  await nackAll(
    conn,
    "demo.notifications",
    0,
    true,
    async () => (await ch.checkQueue("demo.notifications.dlq")).messageCount >= 2,
  );

  // demo.shipping.dlq: a quorum DLQ with its own delivery limit: reading it can drop letters (the console warns).
  await ch.assertQueue("demo.shipping.dlq", {
    durable: true,
    arguments: { "x-queue-type": "quorum", "x-delivery-limit": 5 },
  });
  await ch.bindQueue("demo.shipping.dlq", DLX, "demo.shipping.dlq");
  await work("demo.shipping", "demo.shipping.dlq");
  await publish(
    "demo.shipping",
    [1, 2, 3].map((i) => ({ body: json({ shipmentId: `s-${i}`, carrier: "ACME" }), contentType: "application/json" })),
  );
  await nackAll(conn, "demo.shipping", 3, false);

  // demo.billing.dlq: Spring AMQP's RepublishMessageRecoverer republishes the failed message with exception headers.
  await dlq("demo.billing.dlq");
  await work("demo.billing", "demo.billing.dlq");
  const failures: Array<[string, string, string]> = [
    [
      "com.acme.billing.CardDeclinedException",
      "Card ending 4242 declined: insufficient funds",
      "com.acme.billing.ChargeService.charge(ChargeService.java:88)",
    ],
    [
      "com.acme.billing.CardDeclinedException",
      "Card ending 1881 declined: insufficient funds",
      "com.acme.billing.ChargeService.charge(ChargeService.java:88)",
    ],
    [
      "org.springframework.amqp.support.converter.MessageConversionException",
      "Failed to convert message content",
      "org.springframework.amqp.support.converter.Jackson2JsonMessageConverter.fromMessage(Jackson2JsonMessageConverter.java:120)",
    ],
    [
      "java.lang.NullPointerException",
      'Cannot invoke "Invoice.getCustomer()" because "invoice" is null',
      "com.acme.billing.InvoiceHandler.handle(InvoiceHandler.java:31)",
    ],
    [
      "java.util.concurrent.TimeoutException",
      "Tax service did not answer within 5000 ms",
      "com.acme.billing.TaxClient.quote(TaxClient.java:57)",
    ],
  ];
  await publish(
    "demo.billing.dlq",
    failures.map(([cls, msg, frame], i) => ({
      body: json({ invoiceId: `inv-${2000 + i}`, amount: "49.00" }),
      messageId: `invoice-${2000 + i}`,
      contentType: "application/json",
      headers: {
        "x-exception-message": msg,
        "x-exception-stacktrace": stack(cls, msg, [
          frame,
          "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1664)",
        ]),
        "x-original-exchange": "",
        "x-original-routingKey": "demo.billing",
      },
    })),
  );

  const expected: Record<string, number> = {
    "demo.orders.dlq": orders.length,
    "demo.payments.dlq": 3,
    "demo.inventory.dlq": 4,
    "demo.notifications.dlq": 2,
    "demo.shipping.dlq": 3,
    "demo.billing.dlq": failures.length,
  };
  console.log("Demo dead letters seeded into RabbitMQ:");
  for (const [q, n] of Object.entries(expected)) {
    await waitDepth(ch, q, n);
    console.log(`  ${q.padEnd(24)} ${String((await ch.checkQueue(q)).messageCount).padStart(3)} letters`);
  }
  console.log("  (demo.shipping.dlq is a quorum queue with delivery limit 5: the console asks before reading it)");
  await conn.close();

  // SQS demo letters, by the server's own redrive, when a local SQS server (ElasticMQ) answers.
  if (await sqsAnswers()) {
    console.log(`Demo dead letters seeded into SQS at ${SQS_DEMO_ENDPOINT}:`);
    for (const [q, n] of Object.entries(await seedSqsDemo()))
      console.log(`  ${q.padEnd(24)} ${String(n).padStart(3)} letters`);
  } else {
    console.log(
      `No SQS server answers at ${SQS_DEMO_ENDPOINT}: SQS demo skipped (start one with \`bash scripts/services.sh start elasticmq\`).`,
    );
  }

  // Kafka demo DLTs, written by failing consumers with Spring / Connect headers, when Kafka answers.
  if (await kafkaAnswers()) {
    console.log(`Demo dead letters seeded into Kafka at ${KAFKA_DEMO_BROKERS.join(",")}:`);
    for (const [t, n] of Object.entries(await seedKafkaDemo(KAFKA_DEMO_BROKERS)))
      console.log(`  ${t.padEnd(24)} ${String(n).padStart(3)} letters`);
    for (const [t, n] of Object.entries(await seedKafkaStuckGroup(KAFKA_DEMO_BROKERS)))
      console.log(`  ${t.padEnd(24)} ${String(n).padStart(3)} records waiting behind a poison record`);
  } else {
    console.log(
      `No Kafka broker answers at ${KAFKA_DEMO_BROKERS.join(",")}: Kafka demo skipped (start one with \`bash scripts/services.sh start kafka\`).`,
    );
  }

  // Pulsar demo DLQ, dead-lettered by a real consumer's dead-letter policy, when Pulsar answers.
  if (await pulsarAnswers()) {
    console.log(`Demo dead letters seeded into Pulsar at ${PULSAR_ADMIN_URL}:`);
    for (const [t, n] of Object.entries(await seedPulsarDemo()))
      console.log(`  ${t.padEnd(24)} ${String(n).padStart(3)} letters`);
  } else {
    console.log(
      `No Pulsar answers at ${PULSAR_ADMIN_URL}: Pulsar demo skipped (start one with \`bash scripts/services.sh start pulsar\`).`,
    );
  }

  await seedHostile();
}

main().catch((e) => {
  console.error(`seed-demo failed: ${(e as Error).message}`);
  process.exit(1);
});
