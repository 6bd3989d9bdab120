import "server-only";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { DlqSummary, ReadRisk } from "@/lib/brokers/contract/dlq";
import type { Letter } from "@/lib/brokers/contract/letter";

/**
 * What one read of a risky DLQ cost, as the console measured it: the depth before and after,
 * the letters it saw, those that left the DLQ while it read (dropped or moved on), and how many of
 * the letters it saw the next read would lose. Kept in the scan's progress and audited.
 */
export interface ReadLoss {
  before: number | null;
  after: number | null;
  seen: number;
  /** Letters that left the DLQ during the read: before - after, when both are known. */
  vanished: number | null;
  /** Where letters read past the limit go, when that is one queue (SQS: the DLQ's own DLQ). */
  onwardQueue: string | null;
  /** Letters that arrived in `onwardQueue` during the read. */
  movedOnward: number | null;
  limit: number | null;
  /** Letters seen whose count means the next read loses them (ReadRisk.nextReadLosesAt). */
  lostByNextRead: number | null;
}

const depthOf = async (adapter: BrokerAdapter, queue: string): Promise<number | null> =>
  (await adapter.describeDlq(queue).catch(() => null))?.depth ?? null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts watching a risky read: call `seen` for each letter the read returns, then `finish` after the read has closed. */
export async function watchRead(
  adapter: BrokerAdapter,
  queue: string,
  dlq: DlqSummary,
  risk: ReadRisk,
  settleMs = 3000,
) {
  const onward = risk.onwardQueue ?? null;
  const onwardBefore = onward ? await depthOf(adapter, onward) : null;
  let seen = 0;
  let lostByNextRead = 0;
  // A letter without the count has never been counted (RabbitMQ sets x-delivery-count from the first redelivery on).
  const countOf = (l: Letter) =>
    risk.countField === "deliveryCount"
      ? (l.failure.deliveryCount ?? 0)
      : risk.countField === "count"
        ? (l.failure.count ?? 0)
        : null;
  return {
    seen(l: Letter) {
      seen++;
      const c = countOf(l);
      if (risk.nextReadLosesAt !== undefined && c !== null && c >= risk.nextReadLosesAt) lostByNextRead++;
    },
    /** Waits for the broker to settle (letters are dropped or moved on as the read hands them back), then measures. */
    async finish(): Promise<ReadLoss> {
      let after = await depthOf(adapter, queue);
      for (const t0 = Date.now(); Date.now() - t0 < settleMs; ) {
        await sleep(300);
        const again = await depthOf(adapter, queue);
        if (again === after) break;
        after = again;
      }
      const onwardAfter = onward ? await depthOf(adapter, onward) : null;
      const before = dlq.depth;
      return {
        before,
        after,
        seen,
        vanished: before !== null && after !== null ? Math.max(0, before - after) : null,
        onwardQueue: onward,
        movedOnward: onwardBefore !== null && onwardAfter !== null ? Math.max(0, onwardAfter - onwardBefore) : null,
        limit: risk.limit ?? null,
        lostByNextRead: risk.nextReadLosesAt !== undefined ? lostByNextRead : null,
      };
    },
  };
}

/** True when a read cost letters (something left the DLQ or moved on while it read). */
export function readLostLetters(l: ReadLoss): boolean {
  return (l.vanished ?? 0) > 0 || (l.movedOnward ?? 0) > 0;
}
