/**
 * What the Kafka movers (redrive, discard, repair; and undo, republish.ts) need from the adapter,
 * and what unit tests fake: the DLT's partitions and records, the handled-offset store, a produce
 * with acks=all, and error mapping. Wired in adapter.ts (`moverDeps`).
 */
import type { Message } from "kafkajs";
import type { BrokerError } from "@/lib/brokers/contract/errors";
import type { ManagedHeaderMatcher } from "@/lib/brokers/contract/markers";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import type { HandledStore, TopicRef } from "@/lib/brokers/kafka/handled-store";
import type { OriginalLookup } from "@/lib/brokers/kafka/share-dlq";

export interface MoverDeps {
  connectionId: string;
  /** The broker's name in messages, e.g. "127.0.0.1:9092". */
  endpoint: string;
  store: HandledStore | null;
  /** Throws `not_found` when `dlq` is not a DLT the console knows. */
  assertDlq(dlq: string): Promise<void>;
  /**
   * The DLT as the handled store keys it (name and current topic id). Asked once per walk, before
   * any record is read; without it marks are keyed by name alone (unit-test fakes).
   */
  topicKey?(dlq: string): Promise<TopicRef>;
  /**
   * Start and end offsets of every partition of the DLT, now: asked when a walk starts, and again
   * for the last look at a letter it did not find. A topic that no longer exists throws (not_found).
   */
  partitions(dlq: string): Promise<Array<{ partition: number; start: bigint; end: bigint }>>;
  /**
   * Records of [from, to) of one partition, in offset order (committed records only). A `from`
   * below the partition's log start throws kafkajs's OFFSET_OUT_OF_RANGE.
   */
  readRecords(dlq: string, partition: number, from: bigint, to: bigint): AsyncIterable<InternalRecord>;
  /** The topic exists (admin metadata); other failures throw. */
  topicExists(topic: string): Promise<boolean>;
  /**
   * Produces one record with acks=all on the idempotent producer; resolves when acknowledged, with
   * where the record was written when the client says (a repaired copy's `copyId` needs it).
   */
  produce(topic: string, message: Message): Promise<{ partition: number; offset: string } | undefined>;
  /** The configured origin of this DLT, if any. */
  configOrigin(dlq: string): string | null;
  /** Any failure → a typed BrokerError. */
  mapError(e: unknown, topic?: string): BrokerError;
  /**
   * The original record of a share-group dead letter (KIP-1191) while its topic retains it: a
   * redrive publishes the original's key, value and headers. Absent: the DLQ record as it is.
   */
  originalOf?(ref: { topic: string; partition: number; offset: bigint }): Promise<OriginalLookup>;
  /** Every broker's and the console's managed header names: a repair that names one is refused. */
  isManagedHeader: ManagedHeaderMatcher;
  /** Letters in flight at once (default 16). */
  concurrency?: number;
  /** Bytes of fetched letters held at once (default 16 MiB; one larger letter alone still goes). */
  windowBytes?: number;
  /** Offsets between two requested ones read through rather than fetched apart (default 8). */
  maxGap?: number;
  /** Offsets per Fetch run (default 500). */
  maxRun?: number;
}
