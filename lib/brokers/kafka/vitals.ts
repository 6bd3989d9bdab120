/** A dead-letter topic's vitals from offsets, configs and the records at its partitions' log starts. Pure. */
import type { KafkaConnectionConfig } from "@/lib/config";
import type { DlqVitals } from "@/lib/brokers/contract/inspection";
import type { InternalPartitionData } from "@/lib/brokers/kafka/client";
import { matchDeadLetterTopics } from "@/lib/brokers/kafka/discovery";
import { committedRecords, recordsInRange } from "@/lib/brokers/kafka/fetcher";
import { decodeKafkajsHeaders, originOf } from "@/lib/brokers/kafka/headers";
import type { TopicConfig } from "@/lib/brokers/kafka/retention";
import { timeRetentionMs } from "@/lib/brokers/kafka/config-checks";

/** The DLQs `listDlqs` lists: configured plus discovered among `topics`, sorted. */
export function dlqNamesOf(
  config: Pick<KafkaConnectionConfig, "dlqs" | "discover" | "dltPatterns">,
  topics: string[],
): string[] {
  const discovered = config.discover ? matchDeadLetterTopics(topics, config.dltPatterns) : [];
  return [...new Set([...config.dlqs.map((d) => d.name), ...discovered])].sort();
}

/** Offsets of one partition as ListOffsets gave them (read_committed, like the adapter's depth). */
export interface PartitionOffsets {
  partition: number;
  start: bigint;
  end: bigint;
}

/** What a partition's log start holds. */
export type LogStart =
  | { kind: "letter"; at: number; origin: string | null }
  /** No letter in [start, end): only transaction markers or aborted records. */
  | { kind: "none" }
  /** Not found out (the read failed or did not get far enough): the topic's oldest letter is then unknown. */
  | { kind: "unknown" };

/**
 * The first letter at or after `start` in one partition's Fetch answer: committed, not a control
 * record. `next` is where to fetch again when the answer ended before any letter and before `end`
 * (null: nothing to fetch again). A record without a timestamp (-1, message format v0) is unknown.
 */
export function logStartOf(
  data: Pick<InternalPartitionData, "messages" | "abortedTransactions">,
  start: bigint,
  end: bigint,
): { found: LogStart | null; next: bigint | null } {
  const [first] = recordsInRange(committedRecords(data), start, end);
  if (first) {
    const at = Number(first.timestamp);
    if (!Number.isFinite(at) || at < 0) return { found: { kind: "unknown" }, next: null };
    return { found: { kind: "letter", at, origin: originOf(decodeKafkajsHeaders(first.headers)).topic }, next: null };
  }
  const raw = data.messages;
  const last = raw.length ? BigInt(raw[raw.length - 1].offset) : null;
  if (last !== null && last >= end - 1n) return { found: { kind: "none" }, next: null };
  return { found: null, next: last !== null && last >= start ? last + 1n : null };
}

/**
 * `offsets` null: some partition's offsets are unknown (no leader), and then so are depth and the
 * counter (a partial sum would look like a reset to the sampler). `retentionClock` is "arrival":
 * see inspect.ts for how record timestamps and LogAppendTime / CreateTime bear on it.
 */
export function vitalsOf(
  name: string,
  offsets: PartitionOffsets[] | null,
  starts: Map<number, LogStart>,
  config: TopicConfig | null,
): DlqVitals {
  let depth: number | null = null;
  let enteredTotal: number | null = null;
  let oldest: number | null = null;
  if (offsets) {
    depth = 0;
    enteredTotal = 0;
    let known = true;
    for (const p of offsets) {
      depth += Number(p.end - p.start);
      enteredTotal += Number(p.end);
      if (p.end <= p.start) continue;
      const s = starts.get(p.partition) ?? { kind: "unknown" };
      if (s.kind === "unknown") known = false;
      else if (s.kind === "letter" && (oldest === null || s.at < oldest)) oldest = s.at;
    }
    // One partition's oldest letter unknown: the topic's is unknown too (a later one would promise
    // more time than the letters have).
    if (!known) oldest = null;
  }
  return {
    name,
    queueType: "topic",
    depth,
    // A read takes nothing from a topic: no letter is ever "in flight" in the DLT.
    inFlight: null,
    enteredTotal,
    oldestAt: oldest === null ? null : new Date(oldest).toISOString(),
    retentionMs: config ? timeRetentionMs(config) : null,
    retentionClock: "arrival",
  };
}
