/**
 * Tests' access to the real local Pulsar (scripts/services.sh, admin and WebSocket on :8080): a
 * namespace of their own, topics, and dead letters made the way applications make them, by a
 * Shared consumer with a dead-letter policy that negatively acknowledges every delivery until
 * Pulsar's client moves the message to the DLQ topic.
 */
import { randomUUID } from "node:crypto";
import type { PulsarConnectionConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { PulsarAdmin, PulsarSocket, topicPath, type PulsarEndpoint, type TopicName } from "@/lib/brokers/pulsar/client";
import { readUnacked } from "@/lib/brokers/pulsar/reader";

export const PULSAR_ADMIN_URL = process.env.PULSAR_ADMIN_URL ?? "http://127.0.0.1:8080";

export function testEndpoint(over: Partial<PulsarEndpoint> = {}): PulsarEndpoint {
  return {
    connectionId: "test-pulsar",
    adminUrl: PULSAR_ADMIN_URL,
    serviceUrl: PULSAR_ADMIN_URL.replace(/^http/, "ws"),
    token: undefined,
    timeoutMs: 15_000,
    ...over,
  };
}

/** A connection as the config schema would give it, written out so that Playwright (which cannot load lib/config) can use this kit too. */
export function testConfig(over: Partial<PulsarConnectionConfig> = {}): PulsarConnectionConfig {
  return {
    kind: "pulsar",
    id: "test-pulsar",
    name: "Test Pulsar",
    adminUrl: PULSAR_ADMIN_URL,
    dlqPatterns: ["*-DLQ"],
    discover: true,
    dlqs: [],
    subscription: "dlq-console",
    createSubscription: true,
    timeoutSeconds: 15,
    ...over,
  };
}

export interface KitLetter {
  body: Uint8Array;
  properties?: Record<string, string>;
  key?: string | null;
  eventTime?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PulsarKit {
  readonly ep = testEndpoint();
  readonly admin = new PulsarAdmin(this.ep);
  readonly tenant = "public";
  /** A namespace of the kit's own (deleted by `cleanup`), or a named one that stays (the demo's). */
  constructor(readonly namespace = `dlqc-${randomUUID().slice(0, 8)}`) {}
  private created = false;
  private topics = new Set<string>();
  private n = 0;

  get ns(): string {
    return `${this.tenant}/${this.namespace}`;
  }

  topic(topic: string): TopicName {
    return { tenant: this.tenant, namespace: this.namespace, topic };
  }

  name(prefix: string): string {
    return `${prefix}-${++this.n}-${randomUUID().slice(0, 6)}`;
  }

  async ensureNamespace(): Promise<void> {
    if (this.created) return;
    await this.admin
      .request("PUT", `namespaces/${this.tenant}/${this.namespace}`, "create a namespace", { body: {} })
      .catch((e: unknown) => {
        // A named namespace (the demo's) made by an earlier run.
        if (!(e instanceof BrokerError && /already exists/i.test(e.userMessage))) throw e;
      });
    this.created = true;
  }

  async createTopic(topic: string): Promise<TopicName> {
    await this.ensureNamespace();
    const t = this.topic(topic);
    await this.admin.request("PUT", `persistent/${topicPath(t)}`, "create a test topic");
    this.topics.add(topic);
    return t;
  }

  /** Publishes each letter and waits for Pulsar's confirmation; returns the message ids (WebSocket form). */
  async produce(t: TopicName, letters: KitLetter[]): Promise<string[]> {
    const p = await PulsarSocket.open(this.ep, `producer/persistent/${topicPath(t)}`, "publish test letters");
    const ids: string[] = [];
    try {
      for (const [i, l] of letters.entries()) {
        p.send({
          payload: Buffer.from(l.body).toString("base64"),
          properties: l.properties ?? {},
          context: String(i),
          ...(l.key ? { key: l.key } : {}),
          ...(l.eventTime ? { eventTime: l.eventTime } : {}),
        });
        const f = await p.next();
        if (f?.result !== "ok") throw new Error(`publish failed: ${JSON.stringify(f)}`);
        ids.push(String(f.messageId));
      }
    } finally {
      await p.close();
    }
    return ids;
  }

  /** Entries ever added to a topic (its last confirmed entry's count within the current ledgers). */
  async entries(t: TopicName): Promise<number> {
    const s = await this.admin.get<{ entriesAddedCounter?: number; lastConfirmedEntry?: string }>(
      `persistent/${topicPath(t)}/internalStats`,
      "read test stats",
      { notFound: "null" },
    );
    return s?.entriesAddedCounter ?? 0;
  }

  /**
   * Makes `count` new messages of `source` die into `dlq` through subscription `sub`: a Shared
   * consumer with deadLetterTopic and maxRedeliverCount 1 nacks every delivery until Pulsar's client
   * publishes them to the DLQ topic (in delivery order) and acknowledges them.
   */
  async deadLetter(
    source: TopicName,
    dlq: TopicName,
    sub: string,
    produce: KitLetter[],
    opts: { expectNew?: number } = {},
  ): Promise<void> {
    await this.ensureNamespace();
    const before = await this.entries(dlq).catch(() => 0);
    const want = before + (opts.expectNew ?? produce.length);
    const dlqFull = `persistent://${dlq.tenant}/${dlq.namespace}/${dlq.topic}`;
    const consumer = await PulsarSocket.open(
      this.ep,
      `consumer/persistent/${topicPath(source)}/${encodeURIComponent(sub)}?subscriptionType=Shared&deadLetterTopic=${encodeURIComponent(dlqFull)}&maxRedeliverCount=1&negativeAckRedeliveryDelay=50&receiverQueueSize=100`,
      "consume test letters",
    );
    this.topics.add(source.topic);
    this.topics.add(dlq.topic);
    let stop = false;
    const nacking = (async () => {
      while (!stop) {
        const f = await consumer.next(200);
        // An ended socket answers at once: looping on would starve every timer. `reached` says why.
        if (!f && consumer.endedWith) return;
        if (f && typeof f.messageId === "string")
          consumer.send({ type: "negativeAcknowledge", messageId: f.messageId });
      }
    })();
    const reached = async (n: number) => {
      const deadline = Date.now() + 30_000;
      while ((await this.entries(dlq).catch(() => 0)) < n) {
        if (Date.now() > deadline)
          throw new Error(
            `letters did not reach ${dlq.topic} within 30 s${consumer.endedWith ? ` (the nacking consumer's socket ended: ${consumer.endedWith.message})` : ""}`,
          );
        await sleep(25);
      }
    };
    try {
      // One at a time: messages nacked together are dead-lettered in no set order, and the
      // contracts need the DLQ in the order the letters were given.
      for (const [i, l] of produce.entries()) {
        await this.produce(source, [l]);
        await reached(before + i + 1);
      }
      await reached(want);
    } finally {
      stop = true;
      await nacking;
      await consumer.close();
    }
  }

  /** Every message stored in a topic, oldest first, read without a subscription. */
  async readAll(t: TopicName) {
    const out = [];
    for await (const m of readUnacked(this.ep, this.admin, t, `no-such-subscription-${randomUUID()}`))
      out.push(m.frame);
    return out;
  }

  async terminate(t: TopicName): Promise<void> {
    await this.admin.request("POST", `persistent/${topicPath(t)}/terminate`, "terminate a test topic");
  }

  async cleanup(): Promise<void> {
    if (!this.created) return;
    const list =
      (await this.admin
        .get<string[]>(`persistent/${this.tenant}/${this.namespace}`, "list test topics", { notFound: "null" })
        .catch(() => null)) ?? [];
    for (const full of list) {
      const topic = full.split("/").pop()!;
      await this.admin
        .request("DELETE", `persistent/${topicPath(this.topic(topic))}?force=true`, "delete a test topic")
        .catch(() => undefined);
    }
    await this.admin
      .request("DELETE", `namespaces/${this.tenant}/${this.namespace}`, "delete the test namespace")
      .catch(() => undefined);
  }
}

/** The subscription of the test application whose failures dead-letter the letters. */
export const APP_SUBSCRIPTION = "sub";

/** A letter as the shared contracts give it (headers become properties, the ordering key the key). */
export interface ContractLikeLetter {
  body: Uint8Array;
  messageId?: string;
  headers?: Record<string, string>;
  orderingKey?: string;
}

/** A fresh source topic and its `<source>-sub-DLQ`, filled with these letters by real dead-lettering. */
export async function dlqOf(
  kit: PulsarKit,
  letters: ContractLikeLetter[],
): Promise<{ source: TopicName; dlq: TopicName }> {
  const source = kit.topic(kit.name("orders"));
  const dlq = kit.topic(`${source.topic}-${APP_SUBSCRIPTION}-DLQ`);
  await kit.createTopic(source.topic);
  await kit.deadLetter(
    source,
    dlq,
    APP_SUBSCRIPTION,
    letters.map((l) => ({
      body: l.body,
      properties: { ...(l.headers ?? {}), ...(l.messageId ? { "message-id": l.messageId } : {}) },
      key: l.orderingKey ?? null,
    })),
  );
  return { source, dlq };
}
