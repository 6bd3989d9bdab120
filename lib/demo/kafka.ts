/**
 * Demo dead-letter topics on the local Kafka, made the way applications make them: records go to a
 * source topic and a failing consumer publishes them to the DLT with Spring Kafka or Kafka Connect
 * headers. Idempotent: demo topics are deleted and recreated. Used by scripts/seed-demo.ts.
 */
import { KafkaKit, type FailureSpec } from "@/lib/brokers/kafka/test-kit";
import { KAFKA_STUCK_DEMO } from "./stuck-group";
import { HOSTILE, HOSTILE_DLQS, HOSTILE_EXCEPTION, HOSTILE_LETTERS, HOSTILE_INVALID_UTF8 } from "./hostile-corpus";

export const KAFKA_DEMO = { orders: "demo.orders.DLT", sink: "dlq.demo.jdbc-sink" } as const;

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

async function recreate(kit: KafkaKit, topic: string, partitions: number, configs: Record<string, string> = {}) {
  const admin = await kit.getAdmin();
  if ((await admin.listTopics()).includes(topic)) {
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
    for (let i = 0; i < 100 && (await admin.listTopics()).includes(topic); i++)
      await new Promise((r) => setTimeout(r, 100));
  }
  await kit.createTopic(topic, partitions, configs);
  kit.topics.delete(topic); // demo topics stay after the seed
}

/** Returns the demo topics and their letter counts. */
export async function seedKafkaDemo(brokers?: string[]): Promise<Record<string, number>> {
  const kit = new KafkaKit("demo", brokers);
  try {
    await recreate(kit, "demo.orders", 3);
    await recreate(kit, KAFKA_DEMO.orders, 3, { "retention.ms": String(7 * 86_400_000) });
    const failures: FailureSpec[] = [
      { exceptionClass: "com.acme.orders.OutOfStockException", message: "SKU AB-12 has 0 units left" },
      {
        exceptionClass: "com.fasterxml.jackson.databind.exc.MismatchedInputException",
        message: 'Cannot deserialize value of type `java.math.BigDecimal` from String "12,50"',
      },
      {
        exceptionClass: "java.lang.NullPointerException",
        message: 'Cannot invoke "Customer.getId()" because "customer" is null',
      },
    ];
    const orders = Array.from({ length: 30 }, (_, i) => ({
      body: json({ orderId: 5000 + i, customer: `c-${i % 7}`, total: (i * 3.5).toFixed(2) }),
      key: `c-${i % 7}`,
      partition: i % 3,
    }));
    const big = new Uint8Array(5 * 1024 * 1024).map((_, i) => 0x61 + (i % 26));
    orders.push({ body: big, key: "c-big", partition: 0 });
    orders.push({
      body: Uint8Array.from([0x08, 0x96, 0x01, 0x12, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0xff]),
      key: "c-proto",
      partition: 1,
    });
    await kit.produce("demo.orders", orders);
    // The app fails on two orders in three, and on every record that is not an order (the big and the binary one).
    await kit.failingConsumer("demo.orders", KAFKA_DEMO.orders, orders.length, {
      style: "spring",
      fails: (v) => {
        let id: number | null = null;
        try {
          id = v.length < 1000 ? ((JSON.parse(v.toString("utf8")) as { orderId?: number }).orderId ?? null) : null;
        } catch {
          id = null;
        }
        return id === null ? failures[1] : id % 3 !== 2 ? failures[id % failures.length] : null;
      },
    });

    await recreate(kit, "demo.jdbc-sink", 1);
    await recreate(kit, KAFKA_DEMO.sink, 1);
    await kit.produce("demo.jdbc-sink", [
      { body: new TextEncoder().encode("{not json") },
      { body: json({ id: 1, amount: "x" }) },
      { body: new TextEncoder().encode("plain text row") },
    ]);
    await kit.failingConsumer("demo.jdbc-sink", KAFKA_DEMO.sink, 3, {
      style: "connect",
      fails: () => ({
        exceptionClass: "org.apache.kafka.connect.errors.DataException",
        message: "Converting byte[] to Kafka Connect data failed due to serialization error",
      }),
    });
    const admin = await kit.getAdmin();
    const out: Record<string, number> = {};
    for (const t of Object.values(KAFKA_DEMO))
      out[t] = (await admin.fetchTopicOffsets(t)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
    return out;
  } finally {
    await kit.cleanup();
  }
}

/**
 * A payments service whose consumer group stopped behind one record it cannot parse: three
 * partitions of demo.payments, two consumed to the end, the third committed at the poison record
 * with the records after it waiting (lag). The service is scaled down (no members), as after a
 * crash loop, so an admin may move the record to demo.payments.DLT and skip it. The console flags
 * the partition once its committed offset has stood still for stuckAfterSeconds.
 */
export async function seedKafkaStuckGroup(brokers?: string[]): Promise<Record<string, number>> {
  const kit = new KafkaKit("demo", brokers);
  const { topic, group, partition, offset } = KAFKA_STUCK_DEMO;
  try {
    await recreate(kit, topic, 3);
    // A DLT an earlier demo's skip created goes too: the demo starts from the stuck state.
    const admin = await kit.getAdmin();
    if ((await admin.listTopics()).includes(`${topic}.DLT`))
      await admin.deleteTopics({ topics: [`${topic}.DLT`], timeout: 10_000 });
    const payment = (i: number, p: number) => ({
      body: json({ paymentId: 9000 + i, amount: (i * 7.25).toFixed(2), currency: "EUR" }),
      key: `acct-${i % 5}`,
      partition: p,
    });
    const records = [];
    for (let p = 0; p < 3; p++) {
      for (let i = 0; i < 6; i++) {
        // The poison record: a payment whose amount the service's parser refuses.
        if (p === partition && i === offset)
          records.push({
            body: new TextEncoder().encode('{"paymentId":9102,"amount":"12,50 EUR","currency":"EUR"}'),
            key: "acct-2",
            partition: p,
            headers: { "x-origin": "legacy-gateway" },
          });
        else records.push(payment(p * 10 + i, p));
      }
    }
    await kit.produce(topic, records);
    await admin.deleteGroups([group]).catch(() => undefined);
    await admin.setOffsets({
      groupId: group,
      topic,
      partitions: [0, 1, 2].map((p) => ({ partition: p, offset: String(p === partition ? offset : 6) })),
    });
    return { [`${topic} (group ${group})`]: 6 - offset };
  } finally {
    await kit.cleanup();
  }
}

/**
 * The hostile corpus (lib/demo/hostile-corpus.ts) in demo.hostile.DLT: header entries as record
 * headers (plus a header whose name is markup and one whose value is not UTF-8), hostile record
 * keys, the payloads as values; a failing Spring consumer dead-letters every record with the
 * hostile exception.
 */
export async function seedKafkaHostile(brokers?: string[]): Promise<Record<string, number>> {
  const kit = new KafkaKit("demo", brokers);
  const { source, dlq } = HOSTILE_DLQS.kafka;
  try {
    await recreate(kit, source, 1);
    await recreate(kit, dlq, 1);
    const keys = [HOSTILE.script, HOSTILE.rtl, HOSTILE.zeroWidth, HOSTILE.imgOnerror, null];
    const producer = await kit.getProducer();
    for (const [i, l] of HOSTILE_LETTERS.entries()) {
      const headers: Record<string, Buffer> = {
        "x-hostile-letter": Buffer.from(l.label),
        "content-type": Buffer.from(l.contentType),
      };
      for (const [k, v] of Object.entries({ ...l.headers, ...l.extraHeaders, ...l.secretHeaders }))
        headers[k] = Buffer.from(v, "utf8");
      if (l.label === "hostile-bytes") headers["x-hostile-bytes"] = Buffer.from(HOSTILE_INVALID_UTF8);
      const key = keys[i] ?? null;
      await producer.send({
        topic: source,
        acks: -1,
        messages: [{ partition: 0, key: key === null ? null : Buffer.from(key), value: Buffer.from(l.body), headers }],
      });
    }
    await kit.failingConsumer(source, dlq, HOSTILE_LETTERS.length, {
      style: "spring",
      fails: () => ({ exceptionClass: HOSTILE_EXCEPTION.className, message: HOSTILE_EXCEPTION.message }),
    });
    const admin = await kit.getAdmin();
    return { [dlq]: (await admin.fetchTopicOffsets(dlq)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0) };
  } finally {
    await kit.cleanup();
  }
}

export const KAFKA_DEMO_BROKERS = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",").map((b) => b.trim());

/** True when the first demo broker accepts a TCP connection within 2 s. */
export async function kafkaAnswers(brokers = KAFKA_DEMO_BROKERS): Promise<boolean> {
  const { connect } = await import("node:net");
  const [host, port] = brokers[0].split(":");
  return new Promise<boolean>((resolve) => {
    const sock = connect({ host, port: Number(port), timeout: 2000 }, () => {
      sock.end();
      resolve(true);
    });
    sock.on("error", () => resolve(false));
    sock.on("timeout", () => {
      sock.destroy();
      resolve(false);
    });
  });
}
