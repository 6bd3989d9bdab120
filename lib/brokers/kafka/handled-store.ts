/**
 * The console's own record of Kafka offsets it has redriven or discarded (Kafka cannot delete one
 * record). Every function takes whole pages or partitions at once: one query, never one per letter.
 *
 * Rows are keyed by topic name AND topic id: a topic deleted and created again under the same name
 * has a new id and starts its offsets over, and its letters must not show the old topic's marks.
 * Where the broker keeps no ids (before Kafka 2.8), the id is "" and rows match by name, as before.
 * Rows written before ids were kept also have "" ("legacy"): for a topic that has an id they are
 * returned by the per-record lookups flagged `legacy`, and count only for a record no younger than
 * the mark (`markApplies`: a record written after the mark cannot be the one it was made for); a
 * verified legacy row is given the id (`adoptLegacy`). Counts use rows of the current id only, so a
 * legacy row never hides a letter it was not made for.
 */
export type HandledOutcome = "redriven" | "discarded";

/** A topic as the store keys it. A bare name means "id unknown" (""). */
export type TopicRef = string | { name: string; id: string | null };

/** The store's key columns for a topic. */
export const keyOf = (t: TopicRef) =>
  typeof t === "string" ? { topic: t, topicId: "" } : { topic: t.name, topicId: t.id ?? "" };

export interface RecordRef {
  partition: number;
  offset: bigint;
}

export interface HandledMark {
  at: Date;
  outcome: HandledOutcome;
  operationId: string;
  /** Written before topic ids were kept: applies only where `markApplies` says so. */
  legacy?: boolean;
}

/**
 * Whether a mark found for a record counts for it. A mark of the current topic id always does; a
 * legacy one only when the record's timestamp (ms) is not later than the mark, else the record
 * came after the mark (a recreated topic) and is shown as not handled: the safe side, since a
 * letter wrongly shown handled would never be redriven, while one wrongly shown waiting can at
 * worst be redriven twice (duplicates are tagged).
 */
export function markApplies(mark: HandledMark | undefined, recordTimestamp: string | number): mark is HandledMark {
  if (!mark) return false;
  if (!mark.legacy) return true;
  const ts = Number(recordTimestamp);
  return Number.isFinite(ts) && ts >= 0 && ts <= mark.at.getTime();
}

export interface PartitionRange {
  partition: number;
  start: bigint;
  end: bigint;
}

export interface HandledStore {
  markHandled(
    connectionId: string,
    topic: TopicRef,
    refs: RecordRef[],
    mark: { operationId: string; outcome: HandledOutcome; at?: Date },
  ): Promise<number>;
  /** Marks for the given records (a page), keyed `partition-offset`. */
  handledAmong(connectionId: string, topic: TopicRef, refs: RecordRef[]): Promise<Map<string, HandledMark>>;
  /**
   * Marks of one partition's handled offsets in [from, to], keyed `partition-offset`: one indexed
   * range query (the unique index leads with connection, topic, partition, offset). Optional for
   * other stores: `handledAmong` is used where it is missing.
   */
  handledBetween?(
    connectionId: string,
    topic: TopicRef,
    partition: number,
    from: bigint,
    to: bigint,
  ): Promise<Map<string, HandledMark>>;
  /**
   * Undo of a discard: deletes the "discarded" mark of one record (only one made by `operationId`
   * when given). Returns the rows deleted. Optional for other stores: republish then re-produces.
   */
  clearDiscarded?(connectionId: string, topic: TopicRef, ref: RecordRef, operationId?: string): Promise<number>;
  /**
   * Gives legacy marks of these records (verified with `markApplies`) the topic's id, so that
   * counts include them from then on. Optional; a no-op for a bare name or a topic without id.
   */
  adoptLegacy?(connectionId: string, topic: TopicRef, refs: RecordRef[]): Promise<number>;
  /** Handled records inside each partition's [start, end) (rows of the topic's current id only). */
  handledCounts(connectionId: string, topic: TopicRef, ranges: PartitionRange[]): Promise<Map<number, number>>;
  /** First offset in [start, end) not handled, per partition (end when all are). */
  firstUnhandled(connectionId: string, topic: TopicRef, ranges: PartitionRange[]): Promise<Map<number, bigint>>;
}

export const refKey = (partition: number, offset: bigint | string) => `${partition}-${offset.toString()}`;
