/**
 * When a partition's run of "same committed offset with lag" began, from one sample and the row
 * the previous round left (the stored state replaces the series flagStuckPartitions works on, so
 * storage stays one row per partition), and the partition rows a round writes. Pure: unit-tested
 * in stuck.test.ts.
 */
import type { ConsumerGroup } from "@/lib/brokers/contract/consumer-groups";

export interface PartitionState {
  /** null: the group never committed an offset here (its lag counts from the log start). */
  committed: bigint | null;
  lag: bigint;
}

export interface StoredPartitionState extends PartitionState {
  since: Date | null;
}

/**
 * The `since` to store with `cur`, sampled at `at`: the previous `since` when the committed offset
 * is unchanged (null counts as a value: never committed) and both samples have lag; `at` (a new
 * run) when the offset moved, the partition caught up in between, or it is new; null without lag.
 */
export function nextSince(prev: StoredPartitionState | null, cur: PartitionState, at: Date): Date | null {
  if (cur.lag <= 0n) return null;
  if (prev?.since && prev.lag > 0n && prev.committed === cur.committed) return prev.since;
  return at;
}

/** How long the partition has been stuck at `now`, or null when it is not (yet) stuck. */
export function stuckForMs(p: { lag: bigint; since: Date | null }, now: Date, stuckAfterMs: number): number | null {
  if (p.lag <= 0n || !p.since) return null;
  const ms = now.getTime() - p.since.getTime();
  return ms >= stuckAfterMs ? ms : null;
}

/** What the partition's `member` column shows: the client id and host of the member it is assigned to. */
export function memberLabel(m: { clientId: string; host: string }): string {
  return `${m.clientId}/${m.host.replace(/^\//, "")}`;
}

export interface PartitionWrite {
  group_id: string;
  topic: string;
  partition: number;
  committed: string | null;
  start_offset: string | null;
  end_offset: string;
  lag: string;
  member: string | null;
  since: string | null;
}

/**
 * The partitions to write for one group, and the keys of its partitions to keep. A partition whose
 * log offsets are unknown this round (topic deleted, leader down) keeps its row as it was. A group
 * with a problem (part of it unread) gets only its partitions with a committed offset written and
 * none deleted, so a failed read neither resets a `since` nor removes a row.
 */
export function partitionWrites(
  g: ConsumerGroup,
  prev: Map<string, StoredPartitionState>,
  at: Date,
): { writes: PartitionWrite[]; keep: Array<{ topic: string; partition: number }> } {
  const labels = new Map(g.members.map((m) => [m.memberId, memberLabel(m)]));
  const writes: PartitionWrite[] = [];
  const keep: Array<{ topic: string; partition: number }> = [];
  for (const p of g.partitions) {
    keep.push({ topic: p.topic, partition: p.partition });
    if (p.end === null || p.lag === null) continue;
    if (g.problem !== null && p.committed === null) continue;
    const since = nextSince(
      prev.get(partitionKey(g.groupId, p.topic, p.partition)) ?? null,
      { committed: p.committed, lag: p.lag },
      at,
    );
    writes.push({
      group_id: g.groupId,
      topic: p.topic,
      partition: p.partition,
      committed: p.committed?.toString() ?? null,
      start_offset: p.start?.toString() ?? null,
      end_offset: p.end.toString(),
      lag: p.lag.toString(),
      member: p.memberId ? (labels.get(p.memberId) ?? null) : null,
      since: since?.toISOString() ?? null,
    });
  }
  return { writes, keep };
}

export const partitionKey = (groupId: string, topic: string, partition: number) =>
  JSON.stringify([groupId, topic, partition]);

/** A partition's offsets as the broker holds them now (one live read). */
export interface LiveOffsets {
  committed: bigint | null;
  start: bigint | null;
  end: bigint;
  lag: bigint;
}

/** The stored row's fields this file brings up to date. */
export interface PartitionFigures extends StoredPartitionState {
  start: bigint | null;
  end: bigint;
  stuck: boolean;
  stuckForMs: number | null;
}

/**
 * A stored partition row brought up to a live read at `at`: offsets and lag from the broker, and
 * the run of "same committed offset with lag" kept only while the committed offset is the stored
 * one. A moved offset (a skip, a consumer that got past the record) starts a new run now, so a
 * partition is never called stuck on the strength of an offset it has left.
 */
export function withLiveOffsets<T extends PartitionFigures>(
  stored: T,
  live: LiveOffsets,
  at: Date,
  stuckAfterMs: number,
): T {
  const since = nextSince(stored, live, at);
  const forMs = stuckForMs({ lag: live.lag, since }, at, stuckAfterMs);
  return { ...stored, ...live, since, stuck: forMs !== null, stuckForMs: forMs };
}
