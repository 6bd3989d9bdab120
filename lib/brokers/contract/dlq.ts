/** A DLQ as adapters describe it (summaries, partitions, read risks) and how its letters are read (pages, streams). */
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import type { DlqWarning, HeaderEntry, Letter } from "@/lib/brokers/contract/letter";

export type ReadRiskKind = "delivery-limit" | "chained-dlq" | "unknown-queue-type";

/** A reason why reading this DLQ could cost letters; reading then needs an explicit, audited confirmation. */
export interface ReadRisk {
  kind: ReadRiskKind;
  message: string;
  /** e.g. the delivery limit. */
  limit?: number;
  /**
   * Where a letter read past the limit goes, when the broker moves it on rather than dropping it:
   * the queue (SQS: the DLQ's own redrive target) whose depth shows letters that moved during a
   * read. Null or absent: the letter is dropped for good (RabbitMQ quorum queue without a DLX of
   * its own) or its destination cannot be watched (a DLX exchange).
   */
  onwardQueue?: string | null;
  /**
   * Where reading counts against letters, the per-letter count a read raises, as the triage index
   * keeps it (`FailureInfo.deliveryCount` for x-delivery-count, `FailureInfo.count` for SQS
   * ApproximateReceiveCount). A letter without the count has a count of 0.
   */
  countField?: "deliveryCount" | "count";
  /**
   * With `countField`: a letter whose count, as the last read saw it, is at least this is lost to
   * the DLQ by the next read (RabbitMQ: limit - 1, since the read that saw it returned it once
   * more; SQS: limit, since the next receive is the one past it).
   */
  nextReadLosesAt?: number;
}

export interface DlqSummary {
  connectionId: string;
  name: string;
  kind: BrokerKind;
  /** classic | quorum | stream | standard | fifo | topic | unknown */
  queueType: string;
  depth: number | null;
  inFlight: number | null;
  consumers: number | null;
  /** Queues or topics that dead-letter into this one, as far as the adapter can tell. */
  origins: string[];
  source: "config" | "discovered" | "config+discovered";
  readRisk: ReadRisk | null;
  warnings: DlqWarning[];
  /** Broker-specific facts worth showing (retention, arguments), already in display form. */
  facts: HeaderEntry[];
  /** Where `capabilities.randomAccess`: the DLQ's partitions, browsable one by one. */
  partitions?: PartitionSummary[];
}

/** One partition of a randomly accessible DLQ. Offsets are decimal text (64-bit exact). */
export interface PartitionSummary {
  partition: number;
  /** First offset still in the log. */
  start: string;
  /** Offset the next letter will get; letters = end - start. */
  end: string;
  letters: number;
  /** Letters in [start, end) the console has marked handled. */
  handled: number;
  /** Timestamp of the oldest letter not handled, ISO 8601 UTC; null when none. */
  oldestUnhandledAt: string | null;
}

export interface BrowseOptions {
  offset: number;
  limit: number;
  /** Bytes of each payload to keep; the rest is counted and hashed but not held. Default: all. */
  maxBodyBytes?: number;
  /** The caller confirmed the DLQ's `readRisk`. Without it, a risky read throws `confirmation_required:read`. */
  acceptRisk?: boolean;
  signal?: AbortSignal;
  /**
   * Where reads take turns (RabbitMQ: a read holds the letters it took until it ends, so one console
   * read of a queue runs at a time): aborted while this read waits for its turn, the read is refused
   * at once with "throttled" and `details.busy` READ_TURN_BUSY, as when the wait runs out; once the
   * read has its turn, it has no effect (`signal` stops a read). Elsewhere ignored.
   */
  turn?: AbortSignal;
  /** Where `capabilities.randomAccess`: read only this partition (default: all, partition by partition). */
  partition?: number;
  /** With `partition`: start at this offset (decimal text) instead of the oldest (or newest) one. */
  fromOffset?: string;
  /** Where `capabilities.randomAccess`: "newest" pages backwards from the end. Default "oldest". */
  order?: "oldest" | "newest";
}

export interface LetterPage {
  letters: Letter[];
  offset: number;
  limit: number;
  /** More letters were present after this page when it was read. */
  hasMore: boolean;
  /** Depth observed at the start of the read. */
  depth: number | null;
  /** Echo of the random-access options the page was read with. */
  partition?: number | null;
  order?: "oldest" | "newest";
  /**
   * On the last page a read could reach: letters the DLQ holds (they are in its depth) that the read
   * could not reach, and why (held by another reader or consumer, handed out by the broker only
   * after earlier ones are removed, a read limit). No page shows them, so the page says so rather
   * than end short in silence. Absent or null: the adapter knows of none.
   */
  unreached?: StreamShortfall | null;
}

export interface StreamOptions {
  maxBodyBytes?: number;
  acceptRisk?: boolean;
  signal?: AbortSignal;
  /** As BrowseOptions.turn. */
  turn?: AbortSignal;
  /**
   * Called once, before a stream that ran to its end returns, when the adapter knows it did not
   * read every letter of the DLQ (letters held by another reader, letters the broker hands out only
   * after earlier ones are removed, a read limit). A scan then marks nothing gone.
   */
  onShortfall?: (s: StreamShortfall) => void;
}

/** Why a stream that ended did not read the whole DLQ, in words for the operator. */
export interface StreamShortfall {
  reason: string;
  /** Letters left unread, when the broker says how many. */
  unread: number | null;
}
