/**
 * Reading only what arrived since the last read (`BrokerAdapter.tail`), where a broker keeps its
 * letters at positions that a read neither takes, hides nor counts against (Kafka offsets, Pulsar
 * message ids). The triage indexer keeps a DLQ's groups current with it: each round reads the
 * letters after the positions the previous round reached, so a round costs O(new letters).
 * Absent on brokers that read from the head only (RabbitMQ, SQS).
 */
import type { Letter } from "@/lib/brokers/contract/letter";

/**
 * Where a read stopped, per partition (Kafka: partition number → next offset; Pulsar: "" → the
 * last entry read, "ledger:entry"). Opaque to callers: stored as given, handed back as given.
 */
export type TailPositions = Record<string, string>;

/** One letter of a tail read, with where the next read of its partition starts once it is kept. */
export interface TailLetter {
  letter: Letter;
  partition: string;
  /** The partition's position after this letter. */
  next: string;
}

export interface TailReadOptions {
  maxBodyBytes?: number;
  signal?: AbortSignal;
}

export interface TailOps {
  /**
   * Every letter after `from` (an empty map, or a partition missing from it: from the oldest
   * letter stored) up to the end as of the call, in order within each partition, one at a time in
   * bounded memory. A position the log no longer has (deleted by retention, topic recreated) reads
   * from the oldest letter stored. Nothing is taken from the DLQ, hidden or counted.
   */
  readAfter(dlq: string, from: TailPositions, opts?: TailReadOptions): AsyncIterable<TailLetter>;
}
