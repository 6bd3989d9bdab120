/** Facts derived from a DLQ's partitions. Pure. */
import type { DlqSummary } from "@/lib/brokers/contract/dlq";

/** Letters not yet handled by the console, where partitions count handled ones; null otherwise. */
export function unhandledCount(dlq: Pick<DlqSummary, "partitions">): number | null {
  if (!dlq.partitions?.length) return null;
  return dlq.partitions.reduce((n, p) => n + Math.max(0, p.letters - p.handled), 0);
}
