/**
 * Where a requested DLT record is not, and why, in the operator's words. On Kafka offsets identify
 * records (there are no twins), so a letter is "missing" only after a look at its offset: below the
 * partition's log start (deleted by retention or deleteRecords), past its end, in a partition or
 * topic that no longer exists, or read through and not there (compacted away). Each reason is the
 * shared `moveWords(verb, "DLT").missing`, naming the DLT with the fact that was seen. A record already handled by
 * the console keeps its own reason (the handled-offset ledger is Kafka's removal), worded here once.
 */
import { moveWords, type MoveVerb } from "@/lib/brokers/move-rules";
import type { HandledMark } from "@/lib/brokers/kafka/handled-store";

export interface PartitionState {
  partition: number;
  start: bigint;
  end: bigint;
}

/** What a look at the DLT found: its partitions now, or that the topic is gone. */
export type Look = { gone: true } | Partitions;
export type Partitions = { gone: false; partitions: ReadonlyMap<number, PartitionState> };

export const lookOf = (states: PartitionState[]): Partitions => ({
  gone: false,
  partitions: new Map(states.map((s) => [s.partition, s])),
});

/** The words of one call (a move or a discard) on one DLT. */
export function kafkaWords(verb: MoveVerb, dlq: string, endpoint: string) {
  const words = moveWords(verb, "DLT");
  // The shared words name the place looked at, with Kafka's fact: what the look saw.
  const missing = (fact: string) => words.missing(dlq, fact);
  const past = verb === "move" ? "moved" : "discarded";
  return {
    ...words,
    notALetterId: (id: string) => missing(`${id} is not a Kafka letter id (<partition>-<offset>)`),
    topicGone: () => missing(`the topic no longer exists on ${endpoint}`),
    partitionGone: (partition: number) => missing(`the topic has no partition ${partition} (any more)`),
    belowLogStart: (partition: number, offset: bigint, start: bigint) =>
      missing(
        `partition ${partition}: offset ${offset} is below the partition's log start (now ${start}), deleted by retention or by deleteRecords`,
      ),
    pastLogEnd: (partition: number, offset: bigint, end: bigint) =>
      missing(`partition ${partition}: it has no offset ${offset} (its next offset is ${end})`),
    noRecordAt: (partition: number, offset: bigint) =>
      missing(
        `partition ${partition}: read at offset ${offset}, and no record is there (compacted away, an aborted transaction, or a transaction marker)`,
      ),
    /** Inside the log, but nothing could be read from there on (an open transaction holds the records back). */
    notReadable: (partition: number, offset: bigint) =>
      `Offset ${offset} of partition ${partition} could not be read in this call: Kafka returned no record from there on yet (an open transaction holds them back). It was not ${past} and stays in the DLT; try again later.`,
    alreadyHandled: (mark: HandledMark) =>
      `Already handled at ${mark.at.toISOString()} (${mark.outcome}, operation ${mark.operationId}): a handled offset is never handled twice.`,
  };
}

export type KafkaWords = ReturnType<typeof kafkaWords>;

/**
 * Why the record at this offset is not in the DLT as `look` found it, or null when its offset is
 * inside the partition's log (only reading it can tell).
 */
export function outsideTheLog(
  look: Look,
  ref: { partition: number; offset: bigint },
  words: KafkaWords,
): string | null {
  if (look.gone) return words.topicGone();
  const p = look.partitions.get(ref.partition);
  if (!p) return words.partitionGone(ref.partition);
  if (ref.offset < p.start) return words.belowLogStart(ref.partition, ref.offset, p.start);
  if (ref.offset >= p.end) return words.pastLogEnd(ref.partition, ref.offset, p.end);
  return null;
}
