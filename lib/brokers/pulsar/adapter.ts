/**
 * Apache Pulsar, through its admin REST API and WebSocket API.
 *
 * A DLQ is a topic (`tenant/namespace/topic`): Pulsar's client dead-letters a message after
 * `maxRedeliverCount` redeliveries to `<topic>-<subscription>-DLQ`. The console keeps a durable
 * subscription of its own on each DLQ topic (`dlq-console` by default, created from the earliest
 * stored letter when missing): its backlog is the DLQ's depth, the letters it has not acknowledged
 * are the letters in the DLQ, and a letter leaves the DLQ when the console acknowledges it there,
 * after the target confirmed the copy. Reads use a WebSocket reader (a cursor of its own), so they
 * take nothing and change no consumer's redelivery count.
 */
import { secretFromEnv, type PulsarConnectionConfig } from "@/lib/config";
import { compileGlob, type Glob } from "@/lib/glob";
import { numberValue, timestampValue } from "@/lib/brokers/display";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { AdapterSetup, BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerCapabilities } from "@/lib/brokers/contract/capabilities";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { BrowseOptions, DlqSummary, LetterPage, StreamOptions } from "@/lib/brokers/contract/dlq";
import type { DlqWarning, HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
import { managedHeaderMatcher, type ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { MoveOptions, MoveRequest, MoveResult, RepairOps } from "@/lib/brokers/contract/move";
import type {
  RemoveOptions,
  RemoveRequest,
  RemoveResult,
  RepublishOptions,
  RepublishRequest,
  RepublishResult,
} from "@/lib/brokers/contract/remove";
import {
  PulsarAdmin,
  parseTopicName,
  shortName,
  topicOf,
  topicPath,
  type PulsarEndpoint,
  type TopicName,
} from "@/lib/brokers/pulsar/client";
import { bareTopic, toLetter, type LetterContext } from "@/lib/brokers/pulsar/letter";
import { PULSAR_MANAGED_HEADERS } from "@/lib/brokers/pulsar/managed-headers";
import { missingTopic, readUnacked } from "@/lib/brokers/pulsar/reader";
import { parsePosition, positionOfLetterId } from "@/lib/brokers/pulsar/message-id";
import { PulsarMover } from "@/lib/brokers/pulsar/mover";
import { PULSAR_REPAIR_RULES } from "@/lib/brokers/pulsar/repair";
import { repairRefusal } from "@/lib/brokers/move-rules";
import { pulsarLink } from "@/lib/brokers/pulsar/link";
import { inspectPulsar } from "@/lib/brokers/pulsar/inspect";
import { pulsarFindings, readNamespacePolicies } from "@/lib/brokers/pulsar/policies";
import { pulsarSampleWatch } from "@/lib/brokers/pulsar/sample-watch";
import type { SampleWatchOps } from "@/lib/brokers/target-readers";
import type { TailLetter, TailOps } from "@/lib/brokers/tail";

/**
 * Pulsar's default maxMessageSize is 5 MiB, and it counts the message's metadata (properties, key,
 * and the properties dead-lettering adds) as well as the payload: 64 KiB are left for those. A
 * broker may be set to allow less or more.
 */
const MAX_MESSAGE_BYTES = 5 * 1024 * 1024 - 64 * 1024;

const CAPABILITIES: BrokerCapabilities = {
  discovery: true,
  readHidesLetters: false,
  readCountsAsDelivery: false,
  randomAccess: false,
  perLetterRemoval: true,
  nativeBulkMove: false,
  orderedKeys: true,
  stableOrder: true,
  binaryBodies: true,
  maxBodyBytes: MAX_MESSAGE_BYTES,
  producerMessageIds: false,
  republishLimits: [
    "The letter comes back with a new message id and publish time (Pulsar assigns both); its payload, key, event time and properties are kept.",
  ],
  // Pulsar answers no acknowledgement: a letter reported moved by a move that then broke off may
  // still be on the console's subscription, and the redrive engine looks for it when it resumes.
  removalUnconfirmed: true,
};

interface TopicStats {
  msgInCounter?: number;
  storageSize?: number;
  publishers?: unknown[];
  subscriptions?: Record<
    string,
    {
      msgBacklog?: number;
      unackedMessages?: number;
      earliestMsgPublishTimeInBacklog?: number;
      consumers?: unknown[];
      type?: string;
    }
  >;
}

const entries = (n: number) => `${n} entr${n === 1 ? "y" : "ies"}`;

export class PulsarAdapter implements BrokerAdapter {
  readonly kind = "pulsar" as const;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities = CAPABILITIES;
  readonly vocabulary = { queue: "topic", letterId: "message id", origin: "original topic" };
  readonly managedHeaders = PULSAR_MANAGED_HEADERS;
  /**
   * See `RepairOps`: the copy carries the edits (repair.ts); the original is archived before it
   * leaves. Pulsar gives the copy its message id when it is published, so none is known in advance.
   */
  readonly repair: RepairOps = {
    copyLetterId: () => null,
    refusal: (repair) => repairRefusal(repair, PULSAR_REPAIR_RULES, this.isManagedHeader),
  };
  /** Every broker's and the console's managed names (`AdapterSetup`): a repair may touch none. */
  private readonly isManagedHeader: ManagedHeaderMatcher;
  private readonly ep: PulsarEndpoint;
  private readonly admin: PulsarAdmin;
  private readonly mover: PulsarMover;

  constructor(
    private readonly config: PulsarConnectionConfig,
    options: AdapterSetup,
  ) {
    this.connectionId = config.id;
    this.isManagedHeader = managedHeaderMatcher(options.allManagedHeaders);
    this.displayName = config.name ?? config.id;
    const adminUrl = config.adminUrl.replace(/\/$/, "");
    this.ep = {
      connectionId: config.id,
      adminUrl,
      serviceUrl: (config.serviceUrl ?? adminUrl.replace(/^http/, "ws")).replace(/\/$/, ""),
      token: secretFromEnv(config.tokenEnv),
      timeoutMs: config.timeoutSeconds * 1000,
    };
    this.admin = new PulsarAdmin(this.ep);
    this.mover = new PulsarMover(pulsarLink(this.ep, this.admin, config.subscription), {
      subscription: config.subscription,
      ensureSubscription: (t) => this.ensureSubscription(t),
      letterContext: (name) => this.letterContext(name),
      isManagedHeader: this.isManagedHeader,
    });
  }

  private configEntry(name: string) {
    return this.config.dlqs.find((d) => d.name === name);
  }

  private letterContext(name: string, maxBodyBytes?: number): LetterContext {
    return {
      maxBodyBytes,
      maxRedeliverCount: this.config.maxRedeliverCount,
      configOrigin: this.configEntry(name)?.origin ?? null,
    };
  }

  // ---------- discovery ----------

  private async namespaces(): Promise<string[]> {
    if (this.config.namespaces) return this.config.namespaces;
    const tenants = (await this.admin.get<string[]>("tenants", "list tenants")) ?? [];
    const lists = await Promise.all(
      tenants
        .filter((t) => t !== "pulsar")
        .map((t) =>
          this.admin.get<string[]>(`namespaces/${encodeURIComponent(t)}`, `list the namespaces of tenant ${t}`, {
            notFound: "null",
          }),
        ),
    );
    return lists.flatMap((l) => l ?? []);
  }

  /**
   * Pulsar's topic names are case-sensitive, and listing a DLQ gives it a durable subscription that
   * keeps every message: so patterns match case-sensitively here (a live topic "orders-dlq" is not
   * taken for the client's "<topic>-<subscription>-DLQ").
   */
  private patterns: Glob[] | null = null;

  private isDlqTopic(topic: string): boolean {
    const base = topic.replace(/-partition-\d+$/, "");
    this.patterns ??= this.config.dlqPatterns.map((p) => compileGlob(p, { caseSensitive: true }));
    return !base.startsWith("__") && this.patterns.some((g) => g.test(base));
  }

  /** DLQ topic names ("tenant/namespace/topic"), configured first, then discovered, with their source. */
  private async dlqNames(): Promise<Map<string, DlqSummary["source"]>> {
    const out = new Map<string, DlqSummary["source"]>();
    for (const d of this.config.dlqs) out.set(shortName(topicOf(d.name)), "config");
    if (!this.config.discover) return out;
    const namespaces = await this.namespaces();
    const lists = await Promise.all(
      namespaces.map((ns) => {
        const [tenant, namespace] = ns.split("/");
        return this.admin.get<string[]>(
          `persistent/${encodeURIComponent(tenant)}/${encodeURIComponent(namespace)}`,
          `list the topics of namespace ${ns}`,
          { notFound: "null" },
        );
      }),
    );
    for (const full of lists.flatMap((l) => l ?? [])) {
      const t = parseTopicName(full);
      if (!t || !this.isDlqTopic(t.topic)) continue;
      const name = shortName(t);
      out.set(name, out.has(name) ? "config+discovered" : "discovered");
    }
    return out;
  }

  async listDlqs(): Promise<DlqSummary[]> {
    const names = await this.dlqNames();
    const policies = new Map<string, ReturnType<typeof readNamespacePolicies>>();
    return Promise.all(
      [...names].map(([name, source]) => {
        const t = topicOf(name);
        const key = `${t.tenant}/${t.namespace}`;
        if (!policies.has(key))
          policies.set(
            key,
            readNamespacePolicies(this.admin, t.tenant, t.namespace).catch(() => null) as ReturnType<
              typeof readNamespacePolicies
            >,
          );
        return this.summarize(name, t, source, policies.get(key)!);
      }),
    );
  }

  /** Where a DLQ comes from, as listing would say, without listing every namespace; null: not a DLQ of this connection. */
  private sourceOf(t: TopicName): DlqSummary["source"] | null {
    const configured = this.config.dlqs.some((d) => shortName(topicOf(d.name)) === shortName(t));
    const namespaced = !this.config.namespaces || this.config.namespaces.includes(`${t.tenant}/${t.namespace}`);
    const discovered = this.config.discover && namespaced && t.tenant !== "pulsar" && this.isDlqTopic(t.topic);
    return configured && discovered ? "config+discovered" : configured ? "config" : discovered ? "discovered" : null;
  }

  /**
   * The topic a DLQ name names, when it is one of this connection's DLQs; else `not_found`. The
   * console reads, subscribes to and moves letters of DLQs only: its durable subscription on a live
   * topic would keep every message that topic ever gets.
   */
  private dlqTopic(name: string): TopicName {
    const t = topicOf(name);
    if (!this.sourceOf(t)) {
      throw new BrokerError("not_found", {
        userMessage: `Topic ${shortName(t)} is not a DLQ of connection "${this.connectionId}": it is not in its dlqs, and its name does not match dlqPatterns (${this.config.dlqPatterns.join(", ")})${this.config.namespaces ? ` in the namespaces ${this.config.namespaces.join(", ")}` : ""}.`,
      });
    }
    return t;
  }

  async describeDlq(name: string): Promise<DlqSummary> {
    const t = this.dlqTopic(name);
    const summary = await this.summarize(
      shortName(t),
      t,
      this.sourceOf(t)!,
      readNamespacePolicies(this.admin, t.tenant, t.namespace).catch(() => null) as ReturnType<
        typeof readNamespacePolicies
      >,
    );
    if (summary.warnings.some((w) => w.code === "missing")) throw missingTopic(t);
    if (summary.origins.length === 0 && summary.depth) summary.origins = await this.headOrigin(t);
    return summary;
  }

  /**
   * The original topic of the oldest letter (REAL_TOPIC, from a peek of the console subscription's
   * first letter: one request, nothing acknowledged), as the DLQ's origin; empty when it has none.
   * A DLQ named `<topic>-<subscription>-DLQ` holds one topic's letters.
   */
  private async headOrigin(t: TopicName): Promise<string[]> {
    try {
      const h = await this.admin.headersOf(
        `persistent/${topicPath(t)}/subscription/${encodeURIComponent(this.config.subscription)}/position/1`,
        `peek the oldest letter of ${shortName(t)}`,
      );
      const props = JSON.parse(h?.get("x-pulsar-property") ?? "{}") as Record<string, unknown>;
      return typeof props.REAL_TOPIC === "string" ? [bareTopic(props.REAL_TOPIC)] : [];
    } catch {
      return [];
    }
  }

  private async stats(t: TopicName): Promise<TopicStats | null> {
    return this.admin.get<TopicStats>(
      `persistent/${topicPath(t)}/stats?getEarliestTimeInBacklog=true`,
      `read the stats of topic ${shortName(t)}`,
      { notFound: "null" },
    );
  }

  /** Creates the console's subscription from the earliest stored letter; false when the config forbids it. */
  private async ensureSubscription(t: TopicName): Promise<boolean> {
    const stats = await this.stats(t);
    if (!stats) throw missingTopic(t);
    if (stats.subscriptions?.[this.config.subscription]) return true;
    if (!this.config.createSubscription || !this.sourceOf(t)) return false;
    try {
      // MessageId (-1, -1, -1) is Pulsar's "earliest".
      await this.admin.request(
        "PUT",
        `persistent/${topicPath(t)}/subscription/${encodeURIComponent(this.config.subscription)}`,
        `create the console's subscription on ${shortName(t)}`,
        {
          body: { ledgerId: -1, entryId: -1, partitionIndex: -1 },
        },
      );
    } catch (e) {
      // Created meanwhile by another replica of the console.
      if (!(e instanceof BrokerError && e.kind === "bad_request" && /exist/i.test(e.message))) throw e;
    }
    return true;
  }

  private async summarize(
    name: string,
    t: TopicName,
    source: DlqSummary["source"],
    policiesP: ReturnType<typeof readNamespacePolicies>,
  ): Promise<DlqSummary> {
    let stats = await this.stats(t);
    const base = {
      connectionId: this.connectionId,
      name,
      kind: this.kind,
      queueType: "topic",
      source,
      readRisk: null,
      origins: this.configEntry(name)?.origin ? [this.configEntry(name)!.origin!] : [],
    };
    if (!stats) {
      return {
        ...base,
        depth: null,
        inFlight: null,
        consumers: null,
        warnings: [
          {
            code: "missing",
            label: "does not exist",
            message: `Topic ${name} is named in the config but does not exist on the Pulsar cluster.`,
          },
        ],
        facts: [],
      };
    }
    if (!stats.subscriptions?.[this.config.subscription] && this.config.createSubscription) {
      if (await this.ensureSubscription(t).catch(() => false)) stats = (await this.stats(t)) ?? stats;
    }
    const sub = stats.subscriptions?.[this.config.subscription];
    const others = Object.entries(stats.subscriptions ?? {}).filter(([n]) => n !== this.config.subscription);
    const warnings: DlqWarning[] = [];
    const policies = await policiesP;
    for (const f of pulsarFindings({
      dlq: name,
      topic: t,
      subscription: this.config.subscription,
      subscribed: !!sub,
      policies,
      createSubscription: this.config.createSubscription,
    })) {
      warnings.push({
        code: f.code,
        label: f.code.replace(/^pulsar\./, "").replace(/_/g, " "),
        message: `${f.why} ${f.fix}`,
      });
    }
    const facts: HeaderEntry[] = [
      // Pulsar counts entries: letters a batching producer wrote into one entry count once.
      {
        name: "console subscription",
        value: {
          t: "string",
          v: sub
            ? `${this.config.subscription} (backlog ${entries(sub.msgBacklog ?? 0)}; a batched entry holds several letters)`
            : `none: ${this.config.subscription} does not exist`,
        },
      },
      {
        name: "other subscriptions",
        value: {
          t: "string",
          v: others.length ? others.map(([n, s]) => `${n} (backlog ${s.msgBacklog ?? 0})`).join(", ") : "none",
        },
      },
    ];
    if (stats.storageSize !== undefined)
      facts.push({ name: "storage size (bytes)", value: numberValue(stats.storageSize) });
    if (sub?.earliestMsgPublishTimeInBacklog)
      facts.push({ name: "oldest letter published", value: timestampValue(sub.earliestMsgPublishTimeInBacklog) });
    if (policies) {
      facts.push({
        name: "namespace retention",
        value: {
          t: "string",
          v: policies.retentionMinutes
            ? `${policies.retentionMinutes} min, ${policies.retentionSizeMb ?? 0} MB`
            : "none",
        },
      });
      if (policies.messageTtlSeconds)
        facts.push({ name: "message TTL (s)", value: numberValue(policies.messageTtlSeconds) });
    }
    if (this.config.maxRedeliverCount !== undefined)
      facts.push({ name: "maxRedeliverCount (configured)", value: numberValue(this.config.maxRedeliverCount) });
    return {
      ...base,
      depth: sub ? (sub.msgBacklog ?? 0) : null,
      inFlight: null,
      consumers: others.reduce((n, [, s]) => n + (s.consumers?.length ?? 0), 0),
      warnings,
      facts,
    };
  }

  // ---------- reading ----------

  async *stream(name: string, opts: StreamOptions = {}): AsyncIterable<Letter> {
    const t = this.dlqTopic(name);
    const ctx = this.letterContext(shortName(t), opts.maxBodyBytes);
    let position = 0;
    for await (const m of readUnacked(this.ep, this.admin, t, this.config.subscription, { signal: opts.signal })) {
      yield toLetter(m.frame, m.id, position++, ctx);
    }
  }

  /**
   * See `BrokerAdapter.tail` (lib/brokers/tail.ts): one partition "", the last entry read
   * ("ledger:entry"). A read always ends on a whole entry (a batch is read to its last message), so
   * the next one starts after it.
   */
  readonly tail: TailOps = {
    readAfter: (dlq, from, opts = {}) =>
      (async function* (self: PulsarAdapter): AsyncGenerator<TailLetter> {
        const t = self.dlqTopic(dlq);
        const ctx = self.letterContext(shortName(t), opts.maxBodyBytes);
        const after = parsePosition(from[""]) ?? undefined;
        let position = 0;
        for await (const m of readUnacked(self.ep, self.admin, t, self.config.subscription, {
          signal: opts.signal,
          after,
        })) {
          yield {
            letter: toLetter(m.frame, m.id, position++, ctx),
            partition: "",
            next: `${m.id.ledger}:${m.id.entry}`,
          };
        }
      })(this),
  };

  async browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    const t = this.dlqTopic(name);
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(1, Math.min(1000, Math.floor(opts.limit)));
    // The console's subscription is what keeps a DLQ's letters: made on the first look, as listing does.
    await this.ensureSubscription(t).catch((e: unknown) => {
      if (e instanceof BrokerError && e.kind === "not_found") throw e;
    });
    const stats = await this.stats(t);
    if (!stats) throw missingTopic(t);
    const depth = stats.subscriptions?.[this.config.subscription]?.msgBacklog ?? null;
    const letters: Letter[] = [];
    let hasMore = false;
    for await (const l of this.stream(shortName(t), { maxBodyBytes: opts.maxBodyBytes, signal: opts.signal })) {
      if (l.position < offset) continue;
      if (letters.length === limit) {
        hasMore = true;
        break;
      }
      letters.push(l);
    }
    return { letters, offset, limit, hasMore, depth };
  }

  async getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    if (!positionOfLetterId(id)) return null;
    for await (const l of this.stream(name, opts)) if (l.id === id) return l;
    return null;
  }

  // ---------- moving ----------

  async *moveLetters(dlq: string, requests: MoveRequest[], opts: MoveOptions = {}): AsyncIterable<MoveResult> {
    yield* this.mover.move(this.dlqTopic(dlq), requests, opts);
  }

  async *removeLetters(dlq: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult> {
    yield* this.mover.remove(this.dlqTopic(dlq), requests, opts);
  }

  async *republish(
    dlq: string,
    requests: RepublishRequest[],
    opts: RepublishOptions = {},
  ): AsyncIterable<RepublishResult> {
    yield* this.mover.republish(this.dlqTopic(dlq), requests, opts);
  }

  // ---------- operations ----------

  private watchOps: SampleWatchOps | null = null;
  /** See `BrokerAdapter.sampleWatch` and sample-watch.ts: a target topic's subscriptions and cursors, no message read. */
  get sampleWatch(): SampleWatchOps {
    this.watchOps ??= pulsarSampleWatch({ admin: this.admin, ownSubscription: this.config.subscription });
    return this.watchOps;
  }

  async inspect(opts: InspectOptions): Promise<BrokerInspection> {
    const names = await this.dlqNames();
    return inspectPulsar(
      {
        admin: this.admin,
        subscription: this.config.subscription,
        createSubscription: this.config.createSubscription,
        dlqs: [...names.keys()].map((name) => ({ name, topic: topicOf(name) })),
      },
      opts,
    );
  }

  async ping(): Promise<void> {
    await this.admin.get("brokers/health", "answer a health check");
  }

  async close(): Promise<void> {
    // Sockets live only for the work that opened them.
  }
}
