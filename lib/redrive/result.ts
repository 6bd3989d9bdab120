import { jobResult, type JobResult } from "@/lib/jobs/accounting";
import type { LedgerState } from "./plan";

/**
 * What a redrive did with its selection, from its ledger's counts: "2 moved, 1 failed and still in
 * the DLQ". The same words whether the job finished, was cancelled while it ran, or was cancelled
 * before it ran again (queued, waiting for the go-ahead, paused).
 */
export function redriveResult(c: Record<LedgerState, number>): JobResult {
  return jobResult([
    { count: c.moved + c.unconfirmed, words: "moved", done: true },
    { count: c.returned, words: "moved and came back to the DLQ", done: true },
    { count: c.parked, words: "parked", done: true },
    { count: c.skipped, words: "skipped", done: true },
    { count: c.failed + c.checksum_mismatch, words: "failed and still in the DLQ", done: false },
    { count: c.pending + c.interrupted + c.moving, words: "not moved, still in the DLQ", done: false },
    { count: c.missing, words: "missing (not found when the DLQ was looked through)", done: false },
  ]);
}
