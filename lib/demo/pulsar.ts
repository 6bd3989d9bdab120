/**
 * Demo dead letters on the local Pulsar, made the way applications make them: messages go to a
 * topic and the application's Shared consumer, with a dead-letter policy (maxRedeliverCount 1),
 * negatively acknowledges them until Pulsar's client moves them to `<topic>-<subscription>-DLQ`.
 * Idempotent: the demo namespace's topics are deleted and made again. Used by scripts/seed-demo.ts.
 *
 * Pulsar's client writes no error onto a dead letter. Applications that want one attach it as
 * message properties (the retry-letter topic's `reconsumeLater(msg, properties, delay)` carries them
 * on to the DLQ); the demo's letters carry such properties from the start, so that triage has
 * exception classes to group by, and one letter has none (grouped by Pulsar's own reason).
 */
import { PulsarKit, PULSAR_ADMIN_URL, type KitLetter } from "@/lib/brokers/pulsar/test-kit";
import { parseTopicName, topicPath, type TopicName } from "@/lib/brokers/pulsar/client";
import { HOSTILE, HOSTILE_DLQS, HOSTILE_EXCEPTION, HOSTILE_LETTERS } from "./hostile-corpus";

export const PULSAR_DEMO = {
  namespace: "public/demo",
  source: "public/demo/payments",
  subscription: "payments-service",
  dlq: "public/demo/payments-payments-service-DLQ",
} as const;

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

export async function pulsarAnswers(): Promise<boolean> {
  try {
    const res = await fetch(`${PULSAR_ADMIN_URL}/admin/v2/brokers/health`, { signal: AbortSignal.timeout(2000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** The demo namespace exists and these topics are new (the console's subscription on them goes too). */
async function fresh(kit: PulsarKit, topics: TopicName[]): Promise<void> {
  await kit.ensureNamespace();
  for (const t of topics)
    await kit.admin.request("DELETE", `persistent/${topicPath(t)}?force=true`, "delete a demo topic", {
      notFound: "null",
    });
  await kit.createTopic(topics[0].topic);
}

/** Returns the demo DLQ and its letter count. */
export async function seedPulsarDemo(): Promise<Record<string, number>> {
  const namespace = PULSAR_DEMO.namespace.split("/")[1];
  const kit = new PulsarKit(namespace);
  const source = kit.topic("payments");
  const dlq = kit.topic(PULSAR_DEMO.dlq.split("/")[2]);
  await fresh(kit, [source, dlq]);
  const letters: KitLetter[] = [
    {
      body: json({ paymentId: 7001, amount: "12,50", currency: "EUR" }),
      properties: {
        "content-type": "application/json",
        "x-exception-class": "java.lang.NumberFormatException",
        "x-exception-message": 'For input string: "12,50"',
        tenant: "acme",
      },
      key: "acct-1",
    },
    {
      body: json({ paymentId: 7002, amount: "99.00", currency: "XXX" }),
      properties: {
        "content-type": "application/json",
        "x-exception-class": "com.acme.payments.UnknownCurrencyException",
        "x-exception-message": "Currency XXX is not supported",
        tenant: "acme",
      },
      key: "acct-2",
    },
    {
      body: json({ paymentId: 7003, amount: "5,00", currency: "EUR" }),
      properties: {
        "content-type": "application/json",
        "x-exception-class": "java.lang.NumberFormatException",
        "x-exception-message": 'For input string: "5,00"',
        tenant: "globex",
      },
      key: "acct-3",
    },
    {
      body: new TextEncoder().encode("not json at all"),
      properties: { "content-type": "text/plain", tenant: "globex" },
      key: "acct-4",
    },
  ];
  await kit.deadLetter(
    source,
    dlq,
    PULSAR_DEMO.subscription,
    letters.map((l, i) => ({ ...l, eventTime: new Date(Date.UTC(2026, 11, 1, 9, i)).toISOString() })),
  );
  return { [PULSAR_DEMO.dlq]: letters.length };
}

/**
 * The hostile-content corpus (lib/demo/hostile-corpus.ts) dead-lettered into its Pulsar DLQ by a
 * real consumer, each letter's failure and the corpus entries as message properties (Pulsar's
 * properties are text: the invalid UTF-8 letter carries its bytes as the payload only).
 */
export async function seedPulsarHostile(): Promise<Record<string, number>> {
  const { source: sourceName, dlq: dlqName } = HOSTILE_DLQS.pulsar;
  const source = parseTopicName(sourceName)!;
  const dlq = parseTopicName(dlqName)!;
  const kit = new PulsarKit(source.namespace);
  await fresh(kit, [source, dlq]);
  const keys = [HOSTILE.script, HOSTILE.rtl, HOSTILE.zeroWidth, HOSTILE.imgOnerror, null];
  const letters: KitLetter[] = HOSTILE_LETTERS.map((l, i) => ({
    body: l.body,
    key: keys[i] ?? null,
    properties: {
      "x-hostile-letter": l.label,
      "content-type": l.contentType,
      "x-exception-class": HOSTILE_EXCEPTION.className,
      "x-exception-message": HOSTILE_EXCEPTION.message,
      ...l.headers,
      ...l.extraHeaders,
      ...l.secretHeaders,
    },
  }));
  // The DLQ is the client's default name for subscription "hostile-service" of topic "hostile".
  await kit.deadLetter(source, dlq, "hostile-service", letters);
  return { [dlqName]: letters.length };
}
