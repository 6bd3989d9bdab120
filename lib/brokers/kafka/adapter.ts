import "server-only";
import { ConfigResourceTypes, type Admin, type Kafka } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerCapabilities, BrokerVocabulary } from "@/lib/brokers/contract/capabilities";
import type {
  BrowseOptions,
  DlqSummary,
  LetterPage,
  PartitionSummary,
  StreamOptions,
} from "@/lib/brokers/contract/dlq";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { DlqWarning, HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
import type { MoveOptions, MoveRequest, MoveResult } from "@/lib/brokers/contract/move";
import type {
  RemoveOptions,
  RemoveRequest,
  RemoveResult,
  RepublishOptions,
  RepublishRequest,
  RepublishResult,
} from "@/lib/brokers/contract/remove";
import { numberValue, timestampValue } from "@/lib/brokers/display";
import {
  createCluster,
  createKafka,
  createProducerWithCluster,
  type InternalCluster,
  type InternalRecord,
  type KafkaClientOptions,
} from "@/lib/brokers/kafka/client";
import { mapKafkaError } from "@/lib/brokers/kafka/errors";
import {
  DEFAULT_FETCH_LIMITS,
  readPartition,
  readPartitionConcurrently,
  type FetchedBatch,
  type FetchLimits,
} from "@/lib/brokers/kafka/fetcher";
import { matchDeadLetterTopics, parseLetterId } from "@/lib/brokers/kafka/discovery";
import { toLetter } from "@/lib/brokers/kafka/letter";
import {
  markApplies,
  refKey,
  type HandledMark,
  type HandledStore,
  type RecordRef,
} from "@/lib/brokers/kafka/handled-store";
import { fetchTopicIds, type RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";
import { shareGroupDlqTopics } from "@/lib/brokers/kafka/group-configs";
import { planPage, type Segment } from "@/lib/brokers/kafka/paging";
import { formatDuration, retentionWarnings, type TopicConfig } from "@/lib/brokers/kafka/retention";
import { lazyProducer, moveKafkaLetters, removeKafkaLetters, type MoverDeps } from "@/lib/brokers/kafka/mover";
import { republishKafka } from "@/lib/brokers/kafka/republish";
import { inspectKafka } from "@/lib/brokers/kafka/inspect";
import { readConsumerGroups } from "@/lib/brokers/kafka/consumer-groups";
import { groupMembers, readRecordAt, skipToDlt, type GroupClientDeps } from "@/lib/brokers/kafka/consumer-group-skip";
import type { ConsumerGroupOps } from "@/lib/brokers/contract/consumer-groups";
import { originalRef, type OriginalLookup } from "@/lib/brokers/kafka/share-dlq";
import { joinedLetter, lookupOriginal, type OriginalRef } from "@/lib/brokers/kafka/share-original";
import { decodeKafkajsHeaders, originOf } from "@/lib/brokers/kafka/headers";
import { kafkaSampleWatch } from "@/lib/brokers/kafka/sample-watch";
import type { SampleWatchOps } from "@/lib/brokers/target-readers";
import type { TailLetter, TailOps } from "@/lib/brokers/tail";

export const KAFKA_CAPABILITIES: BrokerCapabilities = {
  discovery: true,
  readHidesLetters: false,
  readCountsAsDelivery: false,
  randomAccess: true,
  perLetterRemoval: false,
  nativeBulkMove: false,
  orderedKeys: true,
  repair: true,
  republishLimits: [
    "A record deleted by retention since its discard is produced again: new offset, and the time of the undo as its timestamp (key, value and headers as they were). A record still in the log is restored as it is.",
  ],
};

export const KAFKA_VOCABULARY: BrokerVocabulary = { queue: "topic", letterId: "offset", origin: "original topic" };

export interface KafkaAdapterOptions {
  client?: KafkaClientOptions;
  fetch?: Partial<FetchLimits>;
  /**
   * Where handled offsets are kept, handed in by whoever builds the adapter (the console's
   * registry: the database, lib/connections/kafka-handled-store.ts); null keeps and shows none.
   */
  handledStore: HandledStore | null;
  /** Warn when the oldest unhandled letter has lived this share of the topic's retention (default 0.8). */
  retentionWarnShare?: number;
}

/** A topic as the handled store keys it: name and current id (null on a broker without topic ids). */
interface TopicKey {
  name: string;
  id: string | null;
}

interface TopicState {
  partitions: Array<{ partition: number; start: bigint; end: bigint }>;
  total: number;
}

const MAX_PAGE = 1000;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export class KafkaAdapter implements BrokerAdapter {
  readonly kind = "kafka" as const;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities = KAFKA_CAPABILITIES;
  readonly vocabulary = KAFKA_VOCABULARY;

  private readonly kafka: Kafka;
  private readonly endpoint: string;
  private readonly limits: FetchLimits;
  private readonly store: HandledStore | null;
  private readonly warnShare: number;
  private admin: Promise<Admin> | null = null;
  private cluster: Promise<InternalCluster> | null = null;
  /** Redrive's producer: idempotent, acks=all, one request in flight, no topic auto-creation. */
  private readonly producer = lazyProducer(() =>
    createProducerWithCluster(this.kafka, {
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    }),
  );

  constructor(
    private readonly config: KafkaConnectionConfig,
    options: KafkaAdapterOptions,
  ) {
    this.connectionId = config.id;
    this.displayName = config.name ?? config.id;
    this.endpoint = config.brokers.join(",");
    this.kafka = createKafka(config, options.client);
    this.limits = { ...DEFAULT_FETCH_LIMITS, ...options.fetch };
    this.store = options.handledStore;
    this.warnShare = options.retentionWarnShare ?? 0.8;
  }

  /** See `BrokerAdapter.consumerGroups` (consumer-groups.ts, consumer-group-skip.ts); the adapter's own clients and producer. */
  readonly consumerGroups: ConsumerGroupOps = {
    read: (opts) =>
      readConsumerGroups({ cluster: () => this.getCluster(), mapError: (e, topic) => this.err(e, topic) }, opts),
    recordAt: async (at, opts) =>
      readRecordAt(await this.groupDeps(at.topic), at, { maxBodyBytes: opts?.maxBodyBytes }),
    members: async (groupId) =>
      groupMembers({ admin: await this.getAdmin(), mapError: (e, topic) => this.err(e, topic) }, groupId),
    skipToDlt: async (req) => skipToDlt(await this.groupDeps(req.topic), req),
  };

  /** See `BrokerAdapter.sampleWatch` and sample-watch.ts: consumer groups and offsets of a target topic, no record read. */
  readonly sampleWatch: SampleWatchOps = kafkaSampleWatch({
    topicState: (topic) => this.topicState(topic),
    groups: () => readConsumerGroups({ cluster: () => this.getCluster(), mapError: (e, topic) => this.err(e, topic) }),
  });

  private async groupDeps(topic: string): Promise<GroupClientDeps> {
    const [cluster, admin] = await Promise.all([this.getCluster(topic), this.getAdmin()]);
    return {
      cluster,
      admin,
      fetch: this.limits,
      mapError: (e, t) => this.err(e, t),
      produce: async (t, message) => {
        const [meta] = await this.producer.send(t, message);
        const offset = meta?.baseOffset ?? meta?.offset;
        if (!meta || offset === undefined)
          throw this.err(new Error("the broker acknowledged the record without its offset"), t);
        return { partition: meta.partition, offset: String(offset) };
      },
    };
  }

  private err(e: unknown, topic?: string): BrokerError {
    return mapKafkaError(e, { endpoint: this.endpoint, topic, connection: this.connectionId });
  }

  private async getAdmin(): Promise<Admin> {
    this.admin ??= (async () => {
      const a = this.kafka.admin();
      await a.connect();
      return a;
    })();
    try {
      return await this.admin;
    } catch (e) {
      this.admin = null;
      throw this.err(e);
    }
  }

  /** The group-less client, connected; with `topic`, that topic is added to its metadata. */
  private async getCluster(topic?: string): Promise<InternalCluster> {
    this.cluster ??= (async () => {
      const c = createCluster(this.kafka);
      await c.connect();
      return c;
    })();
    let c: InternalCluster;
    try {
      c = await this.cluster;
    } catch (e) {
      this.cluster = null;
      throw this.err(e);
    }
    if (topic === undefined) return c;
    await this.onTopic(c, topic, () => c.addTargetTopic(topic));
    return c;
  }

  /**
   * Runs `op` about `topic` on the group-less client `c`. kafkajs refreshes a client's metadata for
   * every topic it was ever given (its target topics); once someone else deletes one of them, each
   * refresh fails with UNKNOWN_TOPIC_OR_PARTITION whatever topic is asked, so one deleted DLT would
   * hide all the others. On an unknown topic, the target topics missing from a fresh list of all
   * topics are dropped (as kafkajs's admin does for topics it deletes itself), the metadata is
   * refreshed, and `op` runs once more. A `topic` that is itself gone is not_found.
   */
  private async onTopic<T>(c: InternalCluster, topic: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      const mapped = this.err(e, topic);
      if (mapped.kind !== "not_found") throw mapped;
    }
    const existing = new Set(await this.listTopicNames());
    if (!existing.has(topic)) throw this.notFound(topic);
    for (const t of [...c.targetTopics]) if (!existing.has(t)) c.targetTopics.delete(t);
    try {
      await c.refreshMetadata();
      return await op();
    } catch (e) {
      const mapped = this.err(e, topic);
      throw mapped.kind === "not_found" ? this.notFound(topic) : mapped;
    }
  }

  /** The topic's current id, asked of the broker each time: a recreated topic has a new one. */
  private async topicKey(name: string): Promise<TopicKey> {
    const cluster = await this.getCluster(name);
    let id: string | null | undefined;
    try {
      id = (await fetchTopicIds((await cluster.findControllerBroker()) as RawRequestBroker, [name])).get(name);
    } catch (e) {
      throw this.err(e, name);
    }
    if (id === undefined) throw this.notFound(name);
    return { name, id };
  }

  /**
   * The marks that count for these records of one partition: legacy marks (see handled-store.ts)
   * only for records no younger than the mark, and those are then given the topic's id.
   */
  private settleMarks(
    key: TopicKey,
    partition: number,
    records: InternalRecord[],
    marks: Map<string, HandledMark> | undefined,
  ): Map<string, HandledMark> {
    const out = new Map<string, HandledMark>();
    if (!marks?.size) return out;
    const adopt: RecordRef[] = [];
    for (const r of records) {
      const k = refKey(partition, r.offset);
      const m = marks.get(k);
      if (!markApplies(m, r.timestamp)) continue;
      out.set(k, m);
      if (m.legacy) adopt.push({ partition, offset: BigInt(r.offset) });
    }
    if (adopt.length && key.id && this.store?.adoptLegacy) {
      this.store
        .adoptLegacy(this.connectionId, key, adopt)
        .catch((e) => console.warn(`[kafka] adopting handled offsets of ${key.name}: ${(e as Error).message}`));
    }
    return out;
  }

  private configEntry(name: string) {
    return this.config.dlqs.find((d) => d.name === name);
  }

  private notFound(name: string) {
    return new BrokerError("not_found", {
      userMessage: `Topic "${name}" was not found on ${this.displayName}. It may have been deleted, or it is not a dead-letter topic the console knows about.`,
    });
  }

  private async listTopicNames(): Promise<string[]> {
    const admin = await this.getAdmin();
    try {
      return await admin.listTopics();
    } catch (e) {
      throw this.err(e);
    }
  }

  /**
   * Start and end offsets (read_committed) of every partition, observed now. Asked as
   * admin.fetchTopicOffsets does, but on the group-less client, whose target topics `onTopic` keeps
   * to existing topics: the admin is given none, so its refreshes (listTopics, describeConfigs) ask
   * for every topic and cannot fail on a deleted one.
   */
  private async topicState(name: string): Promise<TopicState> {
    const c = await this.getCluster();
    const [low, high] = await this.onTopic(c, name, async () => {
      await c.addTargetTopic(name);
      await c.refreshMetadataIfNecessary();
      const asked = c.findTopicPartitionMetadata(name).map((p) => ({ partition: p.partitionId }));
      // Every topic has a partition: none means the cached metadata does not know the topic.
      if (!asked.length)
        throw Object.assign(new Error(`no metadata for ${name}`), { type: "UNKNOWN_TOPIC_OR_PARTITION" });
      return Promise.all(
        [true, false].map(async (fromBeginning) => {
          const [t] = await c.fetchTopicsOffset([{ topic: name, fromBeginning, partitions: asked }]);
          const got = new Map((t?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
          // kafkajs leaves out partitions without a leader in its metadata.
          if (got.size !== asked.length)
            throw Object.assign(new Error(`offsets of ${name}: ${got.size} of ${asked.length} partitions answered`), {
              type: "LEADER_NOT_AVAILABLE",
            });
          return got;
        }),
      );
    });
    const partitions = [...low]
      .map(([partition, start]) => ({ partition, start, end: high.get(partition)! }))
      .sort((a, b) => a.partition - b.partition);
    return { partitions, total: partitions.reduce((n, p) => n + Number(p.end - p.start), 0) };
  }

  private async topicConfigs(names: string[]): Promise<Map<string, TopicConfig>> {
    const out = new Map<string, TopicConfig>();
    if (!names.length) return out;
    const admin = await this.getAdmin();
    const res = await admin.describeConfigs({
      includeSynonyms: false,
      resources: names.map((name) => ({
        type: ConfigResourceTypes.TOPIC,
        name,
        configNames: ["retention.ms", "retention.bytes", "cleanup.policy", "max.message.bytes"],
      })),
    });
    for (const r of res.resources) {
      const get = (k: string) => r.configEntries.find((c) => c.configName === k)?.configValue ?? null;
      out.set(r.resourceName, {
        retentionMs: get("retention.ms") === null ? null : Number(get("retention.ms")),
        retentionBytes: get("retention.bytes") === null ? null : Number(get("retention.bytes")),
        cleanupPolicy: get("cleanup.policy"),
        maxMessageBytes: get("max.message.bytes") === null ? null : Number(get("max.message.bytes")),
      });
    }
    return out;
  }

  /** The record at exactly this offset, or null (compacted away, aborted, or a control record). */
  private async recordAt(name: string, partition: number, offset: bigint): Promise<InternalRecord | null> {
    const cluster = await this.getCluster(name);
    // Only the timestamp is wanted: a small per-partition limit (Kafka still returns one whole batch).
    for await (const r of readPartition(cluster, name, partition, offset, offset + 1n, {
      ...this.limits,
      maxBytesPerPartition: 64 * 1024,
    })) {
      return BigInt(r.offset) === offset ? r : null;
    }
    return null;
  }

  private async summarize(
    name: string,
    config: TopicConfig | undefined,
    source: DlqSummary["source"],
  ): Promise<DlqSummary> {
    const state = await this.topicState(name);
    const warnings: DlqWarning[] = [];
    const facts: HeaderEntry[] = [{ name: "partitions", value: numberValue(state.partitions.length) }];
    let handled = new Map<number, number>();
    let firstUnhandled = new Map<number, bigint>(state.partitions.map((p) => [p.partition, p.start]));
    if (this.store) {
      try {
        const key = await this.topicKey(name);
        [handled, firstUnhandled] = await Promise.all([
          this.store.handledCounts(this.connectionId, key, state.partitions),
          this.store.firstUnhandled(this.connectionId, key, state.partitions),
        ]);
      } catch (e) {
        warnings.push({
          code: "handled_unavailable",
          label: "handled offsets unknown",
          message:
            "The console's record of handled offsets could not be read: letters already redriven or discarded are not marked.",
        });
        console.warn(`[kafka] handled offsets for ${name}: ${(e as Error).message}`);
      }
    }
    const partitions: PartitionSummary[] = [];
    const named = new Set<string>();
    let oldest: { at: number; partition: number; offset: bigint } | null = null;
    await Promise.all(
      state.partitions.map(async (p) => {
        const first = firstUnhandled.get(p.partition) ?? p.start;
        let at: number | null = null;
        if (first < p.end) {
          const r = await this.recordAt(name, p.partition, first).catch(() => null);
          if (r && Number(r.timestamp) >= 0) at = Number(r.timestamp);
          // The origin its letters name (Spring, Connect, Streams, share headers): read anyway for the age.
          const origin = r ? originOf(decodeKafkajsHeaders(r.headers)).topic : null;
          if (origin && origin !== name) named.add(origin);
        }
        if (at !== null && (!oldest || at < oldest.at)) oldest = { at, partition: p.partition, offset: first };
        partitions.push({
          partition: p.partition,
          start: p.start.toString(),
          end: p.end.toString(),
          letters: Number(p.end - p.start),
          handled: handled.get(p.partition) ?? 0,
          oldestUnhandledAt: at === null ? null : new Date(at).toISOString(),
        });
      }),
    );
    partitions.sort((a, b) => a.partition - b.partition);
    const handledTotal = partitions.reduce((n, p) => n + p.handled, 0);
    facts.push({ name: "handled by the console", value: numberValue(handledTotal) });
    facts.push({ name: "unhandled", value: numberValue(state.total - handledTotal) });
    const o = oldest as { at: number; partition: number; offset: bigint } | null;
    if (o) {
      facts.push({ name: "oldest unhandled letter", value: timestampValue(o.at) });
      facts.push({ name: "oldest unhandled age", value: { t: "string", v: formatDuration(Date.now() - o.at) } });
    }
    if (config) {
      if (config.cleanupPolicy) facts.push({ name: "cleanup.policy", value: { t: "string", v: config.cleanupPolicy } });
      if (config.retentionMs !== null)
        facts.push({
          name: "retention.ms",
          value: {
            t: "string",
            v: config.retentionMs < 0 ? "unlimited" : `${config.retentionMs} (${formatDuration(config.retentionMs)})`,
          },
        });
      if (config.retentionBytes !== null)
        facts.push({
          name: "retention.bytes",
          value: { t: "string", v: config.retentionBytes < 0 ? "unlimited" : String(config.retentionBytes) },
        });
      if (config.maxMessageBytes !== null)
        facts.push({ name: "max.message.bytes", value: numberValue(config.maxMessageBytes) });
      warnings.push(...retentionWarnings(config, o, Date.now(), this.warnShare));
    }
    const entry = this.configEntry(name);
    return {
      connectionId: this.connectionId,
      name,
      kind: "kafka",
      queueType: "topic",
      depth: state.total,
      inFlight: null,
      consumers: null,
      // The configured origin, else those its oldest unhandled letters name (config-checks.ts's originsOf).
      origins: entry?.origin ? [entry.origin] : [...named].sort(),
      source,
      readRisk: null,
      warnings,
      facts,
      partitions,
    };
  }

  /** Share groups' DLQ topics (shareGroupDlqNames), read at most every 30 s. */
  private shareDlqs: { at: number; names: Set<string> } | null = null;
  private shareDlqWarned = false;

  /**
   * The DLQ topics share groups name in their configuration (`errors.deadletterqueue.topic.name`,
   * KIP-1191): one ListGroups and one DescribeConfigs for all share groups (group-configs.ts). A
   * help to the patterns, not a must: a broker that cannot answer (before Kafka 4.4, or an ACL)
   * leaves the patterns alone, said once in the log.
   */
  private async shareGroupDlqNames(topics: string[]): Promise<Set<string>> {
    if (!this.config.discover || !this.config.shareGroupDlqs || topics.length === 0) return new Set();
    if (this.shareDlqs && Date.now() - this.shareDlqs.at < 30_000) return this.shareDlqs.names;
    let names = new Set<string>();
    try {
      const groups = (await (await this.getAdmin()).listGroups()).groups
        .filter((g) => g.protocolType === "share")
        .map((g) => g.groupId);
      if (groups.length > 0) {
        // A raw request needs the client's metadata loaded: any existing topic will do.
        const c = await this.getCluster(topics[0]);
        const named = await shareGroupDlqTopics((await c.findControllerBroker()) as RawRequestBroker, groups);
        names = new Set([...(named?.values() ?? [])].filter((t) => topics.includes(t)));
      }
    } catch (e) {
      if (!this.shareDlqWarned)
        console.warn(
          `[kafka] ${this.connectionId}: the share groups' DLQ topics could not be read (${this.err(e).userMessage}); discovery goes by the patterns.`,
        );
      this.shareDlqWarned = true;
    }
    this.shareDlqs = { at: Date.now(), names };
    return names;
  }

  async listDlqs(): Promise<DlqSummary[]> {
    const topics = await this.listTopicNames();
    const existing = new Set(topics);
    const discovered = new Set(
      this.config.discover
        ? [...matchDeadLetterTopics(topics, this.config.dltPatterns), ...(await this.shareGroupDlqNames(topics))]
        : [],
    );
    const configured = new Set(this.config.dlqs.map((d) => d.name));
    const names = [...new Set([...configured, ...discovered])].sort();
    const present = names.filter((n) => existing.has(n));
    const configs = await this.topicConfigs(present).catch(() => new Map<string, TopicConfig>());
    const out: DlqSummary[] = [];
    for (const name of names) {
      const source =
        configured.has(name) && discovered.has(name)
          ? "config+discovered"
          : configured.has(name)
            ? "config"
            : "discovered";
      if (!existing.has(name)) {
        out.push({
          connectionId: this.connectionId,
          name,
          kind: "kafka",
          queueType: "topic",
          depth: null,
          inFlight: null,
          consumers: null,
          origins: this.configEntry(name)?.origin ? [this.configEntry(name)!.origin!] : [],
          source,
          readRisk: null,
          warnings: [
            {
              code: "missing",
              label: "does not exist",
              message: `Topic "${name}" is named in the config but does not exist on the broker.`,
            },
          ],
          facts: [],
        });
        continue;
      }
      try {
        out.push(await this.summarize(name, configs.get(name), source));
      } catch (e) {
        if (e instanceof BrokerError && e.kind === "not_found") continue; // deleted while listing
        throw e;
      }
    }
    return out;
  }

  /** The original record of a share-group dead letter, while its topic retains it (share-original.ts). */
  private originalOf(ref: OriginalRef): Promise<OriginalLookup> {
    return lookupOriginal(() => this.groupDeps(ref.topic), ref);
  }

  private async known(name: string): Promise<DlqSummary["source"]> {
    const topics = await this.listTopicNames();
    const configured = this.configEntry(name) !== undefined;
    const discovered =
      this.config.discover &&
      (matchDeadLetterTopics([name], this.config.dltPatterns).length === 1 ||
        (await this.shareGroupDlqNames(topics)).has(name));
    if (!topics.includes(name) || (!configured && !discovered)) throw this.notFound(name);
    return configured && discovered ? "config+discovered" : configured ? "config" : "discovered";
  }

  async describeDlq(name: string): Promise<DlqSummary> {
    const source = await this.known(name);
    const configs = await this.topicConfigs([name]).catch(() => new Map<string, TopicConfig>());
    return this.summarize(name, configs.get(name), source);
  }

  /** Records of [from, to) of one partition, as letters (handled marks looked up once for the lot). */
  private async readRange(
    name: string,
    seg: Segment,
    firstPosition: number,
    opts: { maxBodyBytes?: number; signal?: AbortSignal },
  ): Promise<Letter[]> {
    const cluster = await this.getCluster(name);
    const configOrigin = this.configEntry(name)?.origin ?? null;
    const records: InternalRecord[] = [];
    try {
      for await (const r of readPartition(cluster, name, seg.partition, seg.from, seg.to, this.limits, opts.signal)) {
        records.push(r);
      }
    } catch (e) {
      throw this.err(e, name);
    }
    // The id is asked after the read: if the topic was recreated meanwhile, the records are checked
    // against the new topic's marks and at worst shown as not handled, never the other way round.
    let marks = new Map<string, HandledMark>();
    if (records.length && this.store) {
      const key = await this.topicKey(name).catch((e: unknown) => {
        if (e instanceof BrokerError && e.kind === "not_found") throw e;
        console.warn(`[kafka] topic id of ${name}: ${(e as Error).message}`);
        return null;
      });
      if (key)
        marks = this.settleMarks(
          key,
          seg.partition,
          records,
          await this.marksBetween(
            key,
            seg.partition,
            BigInt(records[0].offset),
            BigInt(records[records.length - 1].offset),
          ),
        );
    }
    return records.map((r) =>
      toLetter(name, seg.partition, r, firstPosition + Number(BigInt(r.offset) - seg.from), {
        maxBodyBytes: opts.maxBodyBytes,
        configOrigin,
        handled: marks.get(refKey(seg.partition, r.offset)),
      }),
    );
  }

  /** Marks of these records (in offset order, one partition): one range query where the store has it. */
  private async marksBetween(
    key: TopicKey,
    partition: number,
    first: bigint,
    last: bigint,
  ): Promise<Map<string, HandledMark>> {
    if (!this.store || last < first) return new Map();
    if (!this.store.handledBetween) {
      const refs: Array<{ offset: string }> = [];
      for (let o = first; o <= last && refs.length < 100_000; o++) refs.push({ offset: o.toString() });
      return this.marksFor(key, partition, refs);
    }
    try {
      return await this.store.handledBetween(this.connectionId, key, partition, first, last);
    } catch (e) {
      console.warn(`[kafka] handled offsets for ${key.name}: ${(e as Error).message}`);
      return new Map();
    }
  }

  private async marksFor(
    key: TopicKey,
    partition: number,
    records: Array<{ offset: string }>,
  ): Promise<Map<string, HandledMark>> {
    if (!this.store || !records.length) return new Map();
    try {
      return await this.store.handledAmong(
        this.connectionId,
        key,
        records.map((r) => ({ partition, offset: BigInt(r.offset) })),
      );
    } catch (e) {
      console.warn(`[kafka] handled offsets for ${key.name}: ${(e as Error).message}`);
      return new Map();
    }
  }

  async browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    const offset = Math.max(0, Math.floor(opts.offset));
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(opts.limit)));
    const order = opts.order ?? "oldest";
    await this.known(name);
    const state = await this.topicState(name);
    let fromOffset: bigint | undefined;
    if (opts.fromOffset !== undefined) {
      if (!/^\d{1,19}$/.test(opts.fromOffset))
        throw new BrokerError("bad_request", {
          userMessage: `"${opts.fromOffset}" is not an offset: use a whole number.`,
        });
      fromOffset = BigInt(opts.fromOffset);
    }
    if (opts.partition !== undefined && !state.partitions.some((p) => p.partition === opts.partition)) {
      throw new BrokerError("bad_request", {
        userMessage: `Topic "${name}" has no partition ${opts.partition} (it has ${state.partitions.length}).`,
      });
    }
    const plan = planPage(state.partitions, { partition: opts.partition, fromOffset, order, offset, limit });
    const letters: Letter[] = [];
    for (const seg of plan.segments) {
      const got = await this.readRange(name, seg, 0, opts);
      // Positions count from the page's start in the chosen order.
      for (const l of order === "newest" ? got.reverse() : got) {
        const o = BigInt(l.id.slice(l.id.indexOf("-") + 1));
        letters.push({ ...l, position: seg.positionOf(o) });
      }
    }
    return {
      letters,
      offset,
      limit,
      hasMore: plan.hasMore,
      depth: state.total,
      partition: opts.partition ?? null,
      order,
    };
  }

  async *stream(name: string, opts: StreamOptions = {}): AsyncIterable<Letter> {
    for await (const r of this.readFrom(name, null, opts)) yield r.letter;
  }

  /** See `BrokerAdapter.tail` (lib/brokers/tail.ts): partition number → next offset. */
  readonly tail: TailOps = {
    readAfter: (dlq, from, opts = {}) =>
      (async function* (self: KafkaAdapter): AsyncGenerator<TailLetter> {
        const starts = new Map<number, bigint>();
        for (const [p, o] of Object.entries(from)) if (/^\d{1,19}$/.test(o)) starts.set(Number(p), BigInt(o));
        for await (const r of self.readFrom(dlq, starts, opts))
          yield { letter: r.letter, partition: String(r.partition), next: (BigInt(r.offset) + 1n).toString() };
      })(this),
  };

  /**
   * Every letter from each partition's start (or `from`'s offset, where the log still has it) to
   * its end as observed when the read begins, partition by partition; the letter's position counts
   * from the log start.
   */
  private async *readFrom(
    name: string,
    from: Map<number, bigint> | null,
    opts: StreamOptions,
  ): AsyncGenerator<{ letter: Letter; partition: number; offset: string }> {
    await this.known(name);
    // End offsets observed now: letters that arrive while streaming are not read.
    const state = await this.topicState(name);
    // A remembered offset outside [start, end] (deleted by retention, topic recreated): from the start.
    const startOf = (p: TopicState["partitions"][number]) => {
      const f = from?.get(p.partition);
      return f !== undefined && f >= p.start && f <= p.end ? f : p.start;
    };
    const cluster = await this.getCluster(name);
    const configOrigin = this.configEntry(name)?.origin ?? null;
    // The id before the read (the lookups run while fetching) and again after it (see the end).
    const key: TopicKey = this.store ? await this.topicKey(name) : { name, id: null };
    // One count per partition first: partitions without handled offsets need no lookups at all.
    // Legacy rows (id "", a bare name) are counted apart: they too need the lookup, to be checked.
    const count = (k: TopicKey | string) => this.store!.handledCounts(this.connectionId, k, state.partitions);
    const handledCounts = this.store
      ? await Promise.all([count(key), key.id === null ? null : count(name)]).catch(() => null)
      : null;
    const open = (p: TopicState["partitions"][number]) => {
      const lookup =
        this.store !== null && (handledCounts === null || handledCounts.some((c) => (c?.get(p.partition) ?? 0) > 0));
      // The handled lookup of a batch runs as soon as its Fetch response is in: one range query per Fetch.
      const annotate = lookup
        ? (first: bigint, last: bigint) => this.marksBetween(key, p.partition, first, last)
        : undefined;
      return readPartitionConcurrently(
        cluster,
        name,
        p.partition,
        startOf(p),
        p.end,
        this.limits,
        opts.signal,
        annotate,
      );
    };
    let base = 0;
    let ahead: {
      iter: ReturnType<typeof open>;
      first: Promise<IteratorResult<FetchedBatch<Map<string, HandledMark>>>>;
    } | null = null;
    for (let k = 0; k < state.partitions.length; k++) {
      const p = state.partitions[k];
      const iter = ahead?.iter ?? open(p);
      let first = ahead?.first ?? null;
      ahead = null;
      // Positions in plain numbers when every offset of the partition is a safe integer (always, in practice).
      const exact = p.end <= MAX_SAFE;
      const start = Number(p.start);
      let finished = false;
      try {
        for (;;) {
          let step: IteratorResult<FetchedBatch<Map<string, HandledMark>>>;
          try {
            step = await (first ?? iter.next());
          } catch (e) {
            throw this.err(e, name);
          }
          first = null;
          if (step.done) break;
          const { records, meta: marks, last } = step.value;
          if (last && k + 1 < state.partitions.length && !ahead) {
            // This partition has no Fetch left: request the next partition's first batch meanwhile.
            const nextIter = open(state.partitions[k + 1]);
            const nextFirst = nextIter.next();
            nextFirst.catch(() => undefined);
            ahead = { iter: nextIter, first: nextFirst };
          }
          const settled =
            marks !== undefined && marks.size > 0 ? this.settleMarks(key, p.partition, records, marks) : null;
          for (let i = 0; i < records.length; i++) {
            const r = records[i];
            const position = base + (exact ? Number(r.offset) - start : Number(BigInt(r.offset) - p.start));
            yield {
              letter: toLetter(name, p.partition, r, position, {
                maxBodyBytes: opts.maxBodyBytes,
                configOrigin,
                handled: settled?.get(refKey(p.partition, r.offset)),
              }),
              partition: p.partition,
              offset: r.offset,
            };
          }
        }
        finished = true;
      } finally {
        if (!finished) {
          // Stopped early (break, abort, error): let this partition's reader and the read-ahead go.
          void iter.return(undefined).catch(() => undefined);
          if (ahead) void ahead.iter.return(undefined).catch(() => undefined);
        }
      }
      base += Number(p.end - p.start);
    }
    // Recreated while it was read: the marks may belong to the other topic. The read does not count.
    if (key.id !== null && (await this.topicKey(name)).id !== key.id) {
      throw new BrokerError("not_found", {
        userMessage: `Topic "${name}" was deleted and created again while it was read. Read it again.`,
      });
    }
  }

  async getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    await this.known(name);
    const ref = parseLetterId(id);
    if (!ref) return null;
    const state = await this.topicState(name);
    let before = 0;
    for (const p of state.partitions) {
      if (p.partition === ref.partition) {
        if (ref.offset < p.start || ref.offset >= p.end) return null;
        const got = await this.readRange(
          name,
          { partition: p.partition, from: ref.offset, to: ref.offset + 1n, positionOf: () => 0 },
          before + Number(ref.offset - p.start),
          opts,
        );
        const l = got.find((x) => x.id === id);
        if (!l) return null;
        const found = { ...l, position: before + Number(ref.offset - p.start) };
        return originOf(found.headers).convention === "share" ? this.withOriginal(name, ref, found, opts) : found;
      }
      before += Number(p.end - p.start);
    }
    return null;
  }

  /** A share-group dead letter joined with its original record, or warned that it is gone. */
  private async withOriginal(
    name: string,
    at: { partition: number; offset: bigint },
    letter: Letter,
    opts: StreamOptions,
  ): Promise<Letter> {
    const record = await this.recordAt(name, at.partition, at.offset).catch((e: unknown) => {
      throw this.err(e, name);
    });
    const ref = record ? originalRef(record.headers) : null;
    if (!record || !ref) return letter;
    return joinedLetter(letter, record, await this.originalOf(ref), ref, { maxBodyBytes: opts.maxBodyBytes });
  }

  /** See lib/brokers/kafka/mover.ts. */
  moveLetters(dlq: string, requests: MoveRequest[], opts: MoveOptions = {}): AsyncIterable<MoveResult> {
    return moveKafkaLetters(this.moverDeps(), dlq, requests, opts);
  }

  private moverDeps(): MoverDeps {
    return {
      connectionId: this.connectionId,
      endpoint: this.endpoint,
      store: this.store,
      assertDlq: async (name) => void (await this.known(name)),
      topicKey: (name) => this.topicKey(name),
      partitions: async (name) => (await this.topicState(name)).partitions,
      readRecords: (name, partition, from, to) =>
        (async function* (self: KafkaAdapter) {
          const cluster = await self.getCluster(name);
          // One letter: a small Fetch (Kafka still returns its whole record batch); a run: the usual limits.
          yield* readPartition(
            cluster,
            name,
            partition,
            from,
            to,
            to - from === 1n ? { ...self.limits, maxBytesPerPartition: 64 * 1024 } : self.limits,
          );
        })(this),
      topicExists: async (topic) => {
        const admin = await this.getAdmin();
        try {
          const md = await admin.fetchTopicMetadata({ topics: [topic] });
          return md.topics.some((t) => t.name === topic);
        } catch (e) {
          if (this.err(e, topic).kind === "not_found") return false;
          throw e;
        }
      },
      produce: async (topic, message) => {
        const [meta] = await this.producer.send(topic, message);
        const offset = meta?.baseOffset ?? meta?.offset;
        return meta && offset !== undefined ? { partition: meta.partition, offset } : undefined;
      },
      configOrigin: (name) => this.configEntry(name)?.origin ?? null,
      mapError: (e, topic) => this.err(e, topic),
      originalOf: (ref) => this.originalOf(ref),
    };
  }

  /** See `BrokerAdapter.removeLetters` and `removeKafkaLetters` (mover.ts). */
  removeLetters(dlq: string, requests: RemoveRequest[], opts: RemoveOptions): AsyncIterable<RemoveResult> {
    return removeKafkaLetters(this.moverDeps(), dlq, requests, opts);
  }

  /** See `BrokerAdapter.republish` and republish.ts: restores a record still in the log, else produces it again. */
  republish(dlq: string, requests: RepublishRequest[], opts: RepublishOptions = {}): AsyncIterable<RepublishResult> {
    return republishKafka(
      {
        ...this.moverDeps(),
        produceRecord: async (topic, message) => {
          const [meta] = await this.producer.send(topic, message);
          return { partition: meta.partition, offset: meta.baseOffset ?? meta.offset ?? "?" };
        },
      },
      dlq,
      requests,
      opts,
    );
  }

  /** See `BrokerAdapter.inspect` and inspect.ts: offsets, configs and the record at each partition's log start. */
  inspect(opts: InspectOptions): Promise<BrokerInspection> {
    return inspectKafka(
      { config: this.config, cluster: () => this.getCluster(), mapError: (e, topic) => this.err(e, topic) },
      opts,
    );
  }

  async ping(): Promise<void> {
    await this.listTopicNames();
  }

  async close(): Promise<void> {
    const [a, c] = [this.admin, this.cluster];
    this.admin = null;
    this.cluster = null;
    await Promise.allSettled([a?.then((x) => x.disconnect()), c?.then((x) => x.disconnect()), this.producer.close()]);
  }
}
