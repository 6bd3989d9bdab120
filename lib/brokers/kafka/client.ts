import "server-only";
import {
  Kafka,
  logLevel,
  type KafkaConfig,
  type logCreator,
  type Producer,
  type ProducerConfig,
  type SASLOptions,
} from "kafkajs";
import type { KafkaConnectionConfig } from "@/lib/config";
import { secretFromEnv } from "@/lib/config";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { NOT_TESTED_VERSION, clusterFactory, mendKafkajs } from "@/lib/brokers/kafka/mend";

export { mendKafkajs };

export interface KafkaClientOptions {
  /** TCP connect timeout per broker (default 3000 ms): a dead broker is reported within seconds. */
  connectionTimeoutMs?: number;
  /** Per request (default 10000 ms; fetches wait at most `maxWaitTime` on top). */
  requestTimeoutMs?: number;
  /** Retries per request (default 2, 100 ms → 1 s backoff). */
  retries?: number;
}

/**
 * kafkajs logs every reconnect and rebalance at INFO and includes request details. The console
 * keeps errors only, as one line without payloads or extra fields (which can carry record data).
 */
export const quietLogCreator: logCreator = () => (entry) => {
  if (entry.level !== logLevel.ERROR) return;
  // Connection failures reach the caller as a typed `unreachable` error; logging each retry adds nothing.
  if (entry.namespace === "Connection" || entry.namespace === "BrokerPool") return;
  const { message, error } = entry.log as { message?: string; error?: string };
  console.warn(`[kafka] ${entry.namespace}: ${message ?? ""}${error ? ` (${error})` : ""}`);
};

function saslOf(config: KafkaConnectionConfig): SASLOptions | undefined {
  if (!config.sasl) return undefined;
  const username = secretFromEnv(config.sasl.usernameEnv);
  const password = secretFromEnv(config.sasl.passwordEnv);
  if (!username || !password) {
    throw new BrokerError("auth", {
      userMessage: `Kafka connection "${config.id}" needs SASL credentials: set the environment variables ${config.sasl.usernameEnv} and ${config.sasl.passwordEnv}.`,
    });
  }
  return { mechanism: config.sasl.mechanism, username, password } as SASLOptions;
}

export function createKafka(config: KafkaConnectionConfig, opts: KafkaClientOptions = {}): Kafka {
  const kc: KafkaConfig = {
    clientId: config.clientId,
    brokers: config.brokers,
    ssl: config.ssl,
    sasl: saslOf(config),
    connectionTimeout: opts.connectionTimeoutMs ?? 3000,
    authenticationTimeout: opts.connectionTimeoutMs ?? 3000,
    requestTimeout: opts.requestTimeoutMs ?? 10_000,
    retry: { retries: opts.retries ?? 2, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.ERROR,
    logCreator: quietLogCreator,
  };
  return mendKafkajs(new Kafka(kc));
}

/** The parts of kafkajs's internal Cluster the group-less fetch uses (kafkajs 2.2.4, pinned exactly). */
export interface InternalBroker {
  fetch(req: {
    replicaId?: number;
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
  }): Promise<{ responses: Array<{ topicName: string; partitions: InternalPartitionData[] }> }>;
}

export interface InternalRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, unknown>;
  isControlRecord?: boolean;
  batchContext?: { producerId: string; inTransaction: boolean; timestampType?: number };
}

export interface InternalPartitionData {
  partition: number;
  errorCode: number;
  highWatermark: string;
  lastStableOffset?: string;
  abortedTransactions?: Array<{ producerId: string; firstOffset: string }>;
  messages: InternalRecord[];
}

export interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  isConnected(): boolean;
  /**
   * The topics every metadata refresh asks for: those given to `addTargetTopic`, kept until removed.
   * kafkajs may replace the Set: read it each time.
   */
  targetTopics: Set<string>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  /** Refreshes when the cached metadata is older than `metadataMaxAge`. */
  refreshMetadataIfNecessary(): Promise<void>;
  /** From the cached metadata; empty when the topic is not in it. */
  findTopicPartitionMetadata(topic: string): Array<{ partitionId: number; leader: number }>;
  /** ListOffsets to each partition's leader (cached metadata), at the client's isolation level. */
  fetchTopicsOffset(
    topics: Array<{ topic: string; fromBeginning: boolean; partitions: Array<{ partition: number }> }>,
  ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(args: { nodeId: string }): Promise<InternalBroker>;
  /** Any connected broker will do for Metadata; this one is at hand once metadata is loaded. */
  findControllerBroker(): Promise<unknown>;
}

/**
 * kafkajs has no public consumer without a consumer group. Its Kafka object keeps a factory for the
 * internal Cluster (the same one its consumer uses to send Fetch requests) under a private symbol;
 * a Fetch to the partition leader needs no group, joins nothing and commits nothing. The shape is
 * checked here, so an upgrade that moves it fails loudly instead of reading wrongly.
 */
export function createCluster(kafka: Kafka): InternalCluster {
  const { factory } = clusterFactory(kafka);
  const cluster = factory({
    allowAutoTopicCreation: false,
    isolationLevel: 1,
    metadataMaxAge: 60_000,
  }) as InternalCluster;
  const mismatch = (what: string) =>
    new BrokerError("protocol", {
      message: `kafkajs Cluster.${what} missing`,
      userMessage: NOT_TESTED_VERSION,
    });
  for (const m of [
    "connect",
    "disconnect",
    "addTargetTopic",
    "findLeaderForPartitions",
    "findBroker",
    "findControllerBroker",
    "refreshMetadata",
    "refreshMetadataIfNecessary",
    "findTopicPartitionMetadata",
    "fetchTopicsOffset",
  ] as const) {
    if (typeof cluster[m] !== "function") throw mismatch(m);
  }
  if (!(cluster.targetTopics instanceof Set)) throw mismatch("targetTopics");
  return cluster;
}

/** The parts of a producer's internal Cluster (kafkajs 2.2.4) that keep its metadata usable. */
export interface InternalProducerCluster
  extends Pick<
    InternalCluster,
    "targetTopics" | "addTargetTopic" | "refreshMetadata" | "refreshMetadataIfNecessary" | "findTopicPartitionMetadata"
  > {
  /** Held by kafkajs while it adds target topics (it puts the previous Set back when the refresh fails). */
  mutatingTargetTopics: { acquire(): Promise<void>; release(): Promise<void> };
  /** A Metadata request for `topics`; none: every topic of the cluster. Changes no target topic. */
  metadata(args?: { topics?: string[] }): Promise<{ topicMetadata: Array<{ topic: string }> }>;
}

/**
 * `kafka.producer(config)`, plus the internal Cluster it was given: kafkajs keeps no public handle
 * on a producer's metadata. The producer is made by kafkajs's own `producer()`, called on a view of
 * `kafka` whose cluster factory hands out the Cluster it creates; everything else is kafkajs's.
 */
export function createProducerWithCluster(
  kafka: Kafka,
  config: ProducerConfig,
): { producer: Producer; cluster: InternalProducerCluster } {
  const { sym, factory } = clusterFactory(kafka);
  let made: unknown = null;
  const view = Object.create(kafka, {
    [sym]: { value: (opts: Record<string, unknown>) => (made = factory(opts)) },
  }) as Kafka;
  const producer = kafka.producer.call(view, config);
  const cluster = made as InternalProducerCluster | null;
  const mismatch = (what: string) =>
    new BrokerError("protocol", {
      message: `kafkajs producer Cluster.${what} missing`,
      userMessage: NOT_TESTED_VERSION,
    });
  if (!cluster) throw mismatch("(none created)");
  for (const m of [
    "addTargetTopic",
    "refreshMetadata",
    "refreshMetadataIfNecessary",
    "findTopicPartitionMetadata",
    "metadata",
  ] as const) {
    if (typeof cluster[m] !== "function") throw mismatch(m);
  }
  if (!(cluster.targetTopics instanceof Set)) throw mismatch("targetTopics");
  if (
    typeof cluster.mutatingTargetTopics?.acquire !== "function" ||
    typeof cluster.mutatingTargetTopics?.release !== "function"
  )
    throw mismatch("mutatingTargetTopics");
  return { producer, cluster };
}
