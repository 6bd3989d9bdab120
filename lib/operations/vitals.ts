/**
 * From one inspection and the previous round to the figures a DLQ is shown and alerted with. Pure.
 */
import type { DlqVitals } from "@/lib/brokers/contract/inspection";

export interface PreviousStatus {
  depth: number | null;
  enteredTotal: bigint | null;
  sampledAt: Date;
}

/** The oldest letter as the last scan saw it (for brokers that cannot tell without a read that costs). */
export interface ScanOldest {
  oldestAt: Date | null;
  /** When the scan that saw it ran. */
  asOf: Date;
}

export interface DlqFigures {
  depth: number | null;
  /** Letters that entered since the previous round: null when unknown (first round, counter reset, no depth). */
  inflow: number | null;
  enteredTotal: bigint | null;
  oldestAt: Date | null;
  oldestSource: "broker" | "scan" | null;
  oldestAsOf: Date | null;
  retentionMs: number | null;
  deadlineAt: Date | null;
}

/**
 * Inflow: the broker's counter delta where it keeps one (a drop means the counter restarted, e.g. a
 * recreated topic: unknown for that round); else the depth's increase, a lower bound (letters that
 * entered and left between two rounds are not seen), never negative.
 */
export function inflowOf(v: Pick<DlqVitals, "depth" | "enteredTotal">, prev: PreviousStatus | null): number | null {
  if (!prev) return null;
  if (v.enteredTotal !== null) {
    if (prev.enteredTotal === null) return null;
    const delta = BigInt(v.enteredTotal) - prev.enteredTotal;
    return delta < 0n ? null : Number(delta);
  }
  if (v.depth === null || prev.depth === null) return null;
  return Math.max(0, v.depth - prev.depth);
}

/**
 * The figures of one DLQ this round. The oldest letter comes from the broker when it tells, else
 * from the last scan (said so, with its time); an empty DLQ has none. The deadline is when the
 * oldest letter's retention runs out: its retention clock start plus the DLQ's retention.
 */
export function figuresOf(v: DlqVitals, prev: PreviousStatus | null, scan: ScanOldest | null): DlqFigures {
  const empty = v.depth === 0;
  let oldestAt: Date | null = null;
  let oldestSource: DlqFigures["oldestSource"] = null;
  let oldestAsOf: Date | null = null;
  if (!empty && v.oldestAt) {
    oldestAt = new Date(v.oldestAt);
    oldestSource = "broker";
  } else if (!empty && scan?.oldestAt) {
    oldestAt = scan.oldestAt;
    oldestSource = "scan";
    oldestAsOf = scan.asOf;
  }
  const deadlineAt = oldestAt && v.retentionMs !== null ? new Date(oldestAt.getTime() + v.retentionMs) : null;
  return {
    depth: v.depth,
    inflow: inflowOf(v, prev),
    enteredTotal: v.enteredTotal === null ? null : BigInt(v.enteredTotal),
    oldestAt,
    oldestSource,
    oldestAsOf,
    retentionMs: v.retentionMs,
    deadlineAt,
  };
}
