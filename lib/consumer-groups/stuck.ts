/**
 * When a partition's run of "same committed offset with lag" began, from one sample and the row
 * the previous round left (the stored state replaces the series flagStuckPartitions works on, so
 * storage stays one row per partition). Pure: unit-tested in stuck.test.ts.
 */

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
  if (prev && prev.since && prev.lag > 0n && prev.committed === cur.committed) return prev.since;
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
