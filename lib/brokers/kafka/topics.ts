import "server-only";
/**
 * One Kafka connection's clients (an admin and a group-less client, each connected on first use)
 * and what they tell about topics: names, ids, partition offsets, configs, the record at an offset.
 * Shared by the adapter's reading (reader.ts), its DLQ summaries (summary.ts) and its movers.
 */
import { ConfigResourceTypes, type Admin, type Kafka } from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { createCluster, type InternalCluster, type InternalRecord } from "@/lib/brokers/kafka/client";
import { mapKafkaError } from "@/lib/brokers/kafka/errors";
import { readPartition, type FetchLimits } from "@/lib/brokers/kafka/fetcher";
import { fetchTopicIds, type RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";
import type { TopicConfig } from "@/lib/brokers/kafka/retention";

/** A topic as the handled store keys it: name and current id (null on a broker without topic ids). */
export interface TopicKey {
  name: string;
  id: string | null;
}

export interface TopicState {
  partitions: Array<{ partition: number; start: bigint; end: bigint }>;
  total: number;
}

export class KafkaTopics {
  readonly connectionId: string;
  readonly displayName: string;
  /** The broker's name in messages, e.g. "127.0.0.1:9092". */
  readonly endpoint: string;
  private admin: Promise<Admin> | null = null;
  private cluster: Promise<InternalCluster> | null = null;

  constructor(
    private readonly kafka: Kafka,
    readonly config: KafkaConnectionConfig,
    readonly limits: FetchLimits,
  ) {
    this.connectionId = config.id;
    this.displayName = config.name ?? config.id;
    this.endpoint = config.brokers.join(",");
  }

  err(e: unknown, topic?: string): BrokerError {
    return mapKafkaError(e, { endpoint: this.endpoint, topic, connection: this.connectionId });
  }

  notFound(name: string) {
    return new BrokerError("not_found", {
      userMessage: `Topic "${name}" was not found on ${this.displayName}. It may have been deleted, or it is not a dead-letter topic the console knows about.`,
    });
  }

  configEntry(name: string) {
    return this.config.dlqs.find((d) => d.name === name);
  }

  async getAdmin(): Promise<Admin> {
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
  async getCluster(topic?: string): Promise<InternalCluster> {
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
      return await leaderSettled(c, op);
    } catch (e) {
      const mapped = this.err(e, topic);
      if (mapped.kind !== "not_found") throw mapped;
    }
    const existing = new Set(await this.listTopicNames());
    if (!existing.has(topic)) throw this.notFound(topic);
    for (const t of [...c.targetTopics]) if (!existing.has(t)) c.targetTopics.delete(t);
    try {
      await c.refreshMetadata();
      return await leaderSettled(c, op);
    } catch (e) {
      const mapped = this.err(e, topic);
      throw mapped.kind === "not_found" ? this.notFound(topic) : mapped;
    }
  }

  /** The topic's current id, asked of the broker each time: a recreated topic has a new one. */
  async topicKey(name: string): Promise<TopicKey> {
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

  async listTopicNames(): Promise<string[]> {
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
  async topicState(name: string): Promise<TopicState> {
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

  async topicConfigs(names: string[]): Promise<Map<string, TopicConfig>> {
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
  async recordAt(name: string, partition: number, offset: bigint): Promise<InternalRecord | null> {
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

  /** Disconnects both clients; the next call connects again. */
  async close(): Promise<void> {
    const [a, c] = [this.admin, this.cluster];
    this.admin = null;
    this.cluster = null;
    await Promise.allSettled([a?.then((x) => x.disconnect()), c?.then((x) => x.disconnect())]);
  }
}

/** A partition whose leader is moving, or not yet elected (a topic just created): kafkajs's error types. */
const LEADER_MOVING = new Set(["NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE"]);

/**
 * Runs `op`, and again on fresh metadata while a partition's leader is moving or not yet elected
 * (5 more times, 0.1 to 1.6 s apart): a look at a topic created a moment ago, or during a leader
 * election, then answers instead of failing with "not the leader for that topic-partition".
 */
async function leaderSettled<T>(c: InternalCluster, op: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (attempt >= 5 || !LEADER_MOVING.has(String((e as { type?: unknown }).type))) throw e;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      await c.refreshMetadata();
    }
  }
}
