import { jobResult, type JobResult } from "@/lib/jobs/accounting";
import type { DiscardState } from "./ledger";

/**
 * What a discard did with its selection, from its ledger's counts: "2 discarded, 1 not discarded,
 * still in the DLQ". The same words whether it finished, was cancelled while it ran, or before it ran.
 */
export function discardResult(c: Record<DiscardState, number>): JobResult {
  return jobResult([
    { count: c.discarded, words: "discarded", done: true },
    { count: c.failed + c.checksum_mismatch, words: "failed and still in the DLQ", done: false },
    { count: c.pending + c.removing, words: "not discarded, still in the DLQ", done: false },
    { count: c.missing, words: "missing (not found when the DLQ was looked through)", done: false },
  ]);
}
