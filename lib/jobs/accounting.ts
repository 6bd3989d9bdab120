/**
 * How a job that keeps a per-letter ledger ended, in the words an operator acts on: a job whose
 * selection is not all accounted for does not end as a plain success, it says what is left ("2
 * moved, 1 still in the DLQ, not moved"). The same words go to the job's view, its final audit
 * row and the API (`JobProgress.result`).
 */

/** One kind of outcome: how many letters ended so, in words ("moved"), and whether it is what the job was asked to do. */
export interface OutcomeCount {
  count: number;
  words: string;
  done: boolean;
}

export interface JobResult {
  /** Every selected letter ended as the job was asked (moved, parked, discarded …). */
  complete: boolean;
  /** Letters that did not: still in the DLQ, or missing from it. */
  left: number;
  /** "3 moved" or "2 moved, 1 still in the DLQ, not moved". */
  summary: string;
}

/** The result of a job from its ledger's counts, in the order given; kinds with no letters are left out. */
export function jobResult(outcomes: OutcomeCount[]): JobResult {
  const shown = outcomes.filter((o) => o.count > 0);
  const left = shown.filter((o) => !o.done).reduce((n, o) => n + o.count, 0);
  const summary = shown.length === 0 ? "no letters" : shown.map((o) => `${o.count} ${o.words}`).join(", ");
  return { complete: left === 0, left, summary };
}

/** The audit outcome of a job's final row: a success only when every selected letter is accounted for. */
export const resultOutcome = (r: JobResult) => (r.complete ? "success" : "failure");

/** The result a job's progress carries, if it has one (jobs written before it existed do not). */
export function resultOf(progress: unknown): JobResult | null {
  const r = (progress as { result?: unknown } | null)?.result as Partial<JobResult> | undefined;
  if (!r || typeof r.complete !== "boolean" || typeof r.summary !== "string") return null;
  return { complete: r.complete, left: typeof r.left === "number" ? r.left : 0, summary: r.summary };
}

const ENDED = new Set(["succeeded", "cancelled", "failed"]);

/** The job has ended (done, cancelled or failed): nothing more will move. */
export const jobEnded = (state: string) => ENDED.has(state);

/**
 * What the letters a job has not handled are, in words: "waiting" while the job can still move them;
 * once it has ended (a cancel included) they were never touched, so they are still in the DLQ.
 */
export function leftWords(kind: "redrive" | "discard", jobState: string): string {
  if (!jobEnded(jobState)) return "waiting";
  return kind === "redrive" ? "not moved, still in the DLQ" : "not discarded, still in the DLQ";
}
