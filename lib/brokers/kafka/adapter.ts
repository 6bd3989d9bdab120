import "server-only";
import type { Kafka } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import type { AdapterSetup, BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { BrokerCapabilities, BrokerVocabulary } from "@/lib/brokers/contract/capabilities";
import type { BrowseOptions, DlqSummary, LetterPage, StreamOptions } from "@/lib/brokers/contract/dlq";
import type { BrokerInspection, InspectOptions } from "@/lib/brokers/contract/inspection";
import type { Letter } from "@/lib/brokers/contract/letter";
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
import { createKafka, createProducerWithCluster, type KafkaClientOptions } from "@/lib/brokers/kafka/client";
import { DEFAULT_FETCH_LIMITS, readPartition, type FetchLimits } from "@/lib/brokers/kafka/fetcher";
import type { HandledStore } from "@/lib/brokers/kafka/handled-store";
import { KAFKA_MANAGED_HEADERS } from "@/lib/brokers/kafka/managed-headers";
import { lazyProducer, moveKafkaLetters, removeKafkaLetters, type MoverDeps } from "@/lib/brokers/kafka/mover";
import { KAFKA_REPAIR_RULES } from "@/lib/brokers/kafka/repair";
import { republishKafka } from "@/lib/brokers/kafka/republish";
import { inspectKafka } from "@/lib/brokers/kafka/inspect";
import { readConsumerGroups } from "@/lib/brokers/kafka/consumer-groups";
import { groupMembers, readRecordAt, skipToDlt, type GroupClientDeps } from "@/lib/brokers/kafka/consumer-group-skip";
import type { ConsumerGroupOps } from "@/lib/brokers/contract/consumer-groups";
import type { OriginalLookup } from "@/lib/brokers/kafka/share-dlq";
import { lookupOriginal, type OriginalRef } from "@/lib/brokers/kafka/share-original";
import { kafkaSampleWatch } from "@/lib/brokers/kafka/sample-watch";
import { KafkaTopics } from "@/lib/brokers/kafka/topics";
import { KafkaDlqs } from "@/lib/brokers/kafka/summary";
import { KafkaReader } from "@/lib/brokers/kafka/reader";
import { repairRefusal } from "@/lib/brokers/move-rules";
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
  stableOrder: true,
  binaryBodies: true,
  maxBodyBytes: null,
  producerMessageIds: true,
  republishLimits: [
    "A record deleted by retention since its discard is produced again: new offset, and the time of the undo as its timestamp (key, value and headers as they were). A record still in the log is restored as it is.",
  ],
  removalUnconfirmed: false,
};

export const KAFKA_VOCABULARY: BrokerVocabulary = { queue: "topic", letterId: "offset", origin: "original topic" };

export interface KafkaAdapterOptions extends AdapterSetup {
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

/**
 * The Kafka adapter: its clients and topic metadata (topics.ts), reading (reader.ts), DLQ
 * summaries (summary.ts), the movers (mover.ts, republish.ts), consumer groups and inspection,
 * assembled around one connection and one idempotent producer.
 */
export class KafkaAdapter implements BrokerAdapter {
  readonly kind = "kafka" as const;
  readonly connectionId: string;
  readonly displayName: string;
  readonly capabilities = KAFKA_CAPABILITIES;
  readonly vocabulary = KAFKA_VOCABULARY;
  readonly managedHeaders = KAFKA_MANAGED_HEADERS;

  private readonly kafka: Kafka;
  private readonly topics: KafkaTopics;
  private readonly dlqs: KafkaDlqs;
  private readonly reader: KafkaReader;
  private readonly store: HandledStore | null;
  /** Every broker's and the console's managed names (`AdapterSetup`): a repair may touch none. */
  private readonly isManagedHeader: ManagedHeaderMatcher;
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
    this.kafka = createKafka(config, options.client);
    this.store = options.handledStore;
    this.isManagedHeader = managedHeaderMatcher(options.allManagedHeaders);
    this.topics = new KafkaTopics(this.kafka, config, { ...DEFAULT_FETCH_LIMITS, ...options.fetch });
    this.dlqs = new KafkaDlqs(this.topics, this.store, options.retentionWarnShare ?? 0.8);
    this.reader = new KafkaReader(this.topics, this.store, {
      known: (name) => this.dlqs.known(name),
      originalOf: (ref) => this.originalOf(ref),
    });
  }

  /**
   * See `RepairOps`: moveLetters applies `MoveRequest.repair` (repair.ts). A repaired copy is a new
   * record at an offset not known in advance.
   */
  readonly repair: RepairOps = {
    copyLetterId: () => null,
    refusal: (repair) => repairRefusal(repair, KAFKA_REPAIR_RULES, this.isManagedHeader),
  };

  /** See `BrokerAdapter.consumerGroups` (consumer-groups.ts, consumer-group-skip.ts); the adapter's own clients and producer. */
  readonly consumerGroups: ConsumerGroupOps = {
    read: (opts) =>
      readConsumerGroups(
        { cluster: () => this.topics.getCluster(), mapError: (e, topic) => this.topics.err(e, topic) },
        opts,
      ),
    recordAt: async (at, opts) =>
      readRecordAt(await this.groupDeps(at.topic), at, { maxBodyBytes: opts?.maxBodyBytes }),
    members: async (groupId) =>
      groupMembers({ admin: await this.topics.getAdmin(), mapError: (e, topic) => this.topics.err(e, topic) }, groupId),
    skipToDlt: async (req) => skipToDlt(await this.groupDeps(req.topic), req),
  };

  /** See `BrokerAdapter.sampleWatch` and sample-watch.ts: consumer groups and offsets of a target topic, no record read. */
  readonly sampleWatch: SampleWatchOps = kafkaSampleWatch({
    topicState: (topic) => this.topics.topicState(topic),
    groups: () =>
      readConsumerGroups({
        cluster: () => this.topics.getCluster(),
        mapError: (e, topic) => this.topics.err(e, topic),
      }),
  });

  private async groupDeps(topic: string): Promise<GroupClientDeps> {
    const [cluster, admin] = await Promise.all([this.topics.getCluster(topic), this.topics.getAdmin()]);
    return {
      cluster,
      admin,
      fetch: this.topics.limits,
      mapError: (e, t) => this.topics.err(e, t),
      produce: async (t, message) => {
        const [meta] = await this.producer.send(t, message);
        const offset = meta?.baseOffset ?? meta?.offset;
        if (!meta || offset === undefined)
          throw this.topics.err(new Error("the broker acknowledged the record without its offset"), t);
        return { partition: meta.partition, offset: String(offset) };
      },
    };
  }

  /** The original record of a share-group dead letter, while its topic retains it (share-original.ts). */
  private originalOf(ref: OriginalRef): Promise<OriginalLookup> {
    return lookupOriginal(() => this.groupDeps(ref.topic), ref);
  }

  /** See summary.ts: configured and discovered DLQs, each summarised. */
  listDlqs(): Promise<DlqSummary[]> {
    return this.dlqs.list();
  }

  describeDlq(name: string): Promise<DlqSummary> {
    return this.dlqs.describe(name);
  }

  /** See reader.ts. */
  browse(name: string, opts: BrowseOptions): Promise<LetterPage> {
    return this.reader.browse(name, opts);
  }

  async *stream(name: string, opts: StreamOptions = {}): AsyncIterable<Letter> {
    for await (const b of this.reader.readBatches(name, null, opts)) for (const l of b.letters) yield l;
  }

  /** See `BrokerAdapter.tail` (lib/brokers/tail.ts): partition number → next offset. */
  readonly tail: TailOps = {
    readAfter: (dlq, from, opts = {}) =>
      (async function* (reader: KafkaReader): AsyncGenerator<TailLetter> {
        const starts = new Map<number, bigint>();
        for (const [p, o] of Object.entries(from)) if (/^\d{1,19}$/.test(o)) starts.set(Number(p), BigInt(o));
        for await (const r of reader.readFrom(dlq, starts, opts))
          yield { letter: r.letter, partition: String(r.partition), next: (BigInt(r.offset) + 1n).toString() };
      })(this.reader),
  };

  getLetter(name: string, id: string, opts: StreamOptions = {}): Promise<Letter | null> {
    return this.reader.getLetter(name, id, opts);
  }

  /** See lib/brokers/kafka/mover.ts. */
  moveLetters(dlq: string, requests: MoveRequest[], opts: MoveOptions = {}): AsyncIterable<MoveResult> {
    return moveKafkaLetters(this.moverDeps(), dlq, requests, opts);
  }

  private moverDeps(): MoverDeps {
    const topics = this.topics;
    return {
      connectionId: this.connectionId,
      endpoint: topics.endpoint,
      store: this.store,
      assertDlq: async (name) => void (await this.dlqs.known(name)),
      topicKey: (name) => topics.topicKey(name),
      partitions: async (name) => (await topics.topicState(name)).partitions,
      readRecords: (name, partition, from, to) =>
        (async function* () {
          const cluster = await topics.getCluster(name);
          // One letter: a small Fetch (Kafka still returns its whole record batch); a run: the usual limits.
          yield* readPartition(
            cluster,
            name,
            partition,
            from,
            to,
            to - from === 1n ? { ...topics.limits, maxBytesPerPartition: 64 * 1024 } : topics.limits,
          );
        })(),
      topicExists: async (topic) => {
        const admin = await topics.getAdmin();
        try {
          const md = await admin.fetchTopicMetadata({ topics: [topic] });
          return md.topics.some((t) => t.name === topic);
        } catch (e) {
          if (topics.err(e, topic).kind === "not_found") return false;
          throw e;
        }
      },
      produce: async (topic, message) => {
        const [meta] = await this.producer.send(topic, message);
        const offset = meta?.baseOffset ?? meta?.offset;
        return meta && offset !== undefined ? { partition: meta.partition, offset } : undefined;
      },
      configOrigin: (name) => topics.configEntry(name)?.origin ?? null,
      mapError: (e, topic) => topics.err(e, topic),
      originalOf: (ref) => this.originalOf(ref),
      isManagedHeader: this.isManagedHeader,
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
      {
        config: this.config,
        cluster: () => this.topics.getCluster(),
        mapError: (e, topic) => this.topics.err(e, topic),
      },
      opts,
    );
  }

  async ping(): Promise<void> {
    await this.topics.listTopicNames();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.topics.close(), this.producer.close()]);
  }
}
