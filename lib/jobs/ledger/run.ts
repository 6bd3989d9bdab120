import "server-only";
import { recordAudit } from "@/lib/audit";
import { AppError } from "@/lib/errors";
import { resultOutcome, type JobResult } from "../accounting";
import type { JobContext, JobOutcome, JobProgress } from "../types";

/**
 * The skeleton every job that works through a ledger of letters shares (redrive, discard, and the
 * console-stopped answer of safe move and the consumer-group skip): stop a run from inside with its
 * outcome settled, save progress and honour a cancel between batches, measure the pace, and record
 * the end. What a job does between batches, and what it pauses for, stays with the job.
 */

/** Thrown to end a run with an outcome already settled (a pause, a cancel, a breaker trip). */
export class JobStop extends Error {
  constructor(readonly outcome: JobOutcome) {
    super("stop");
  }
}

/** The console is stopping; `userMessage` says where the job resumes from. */
export function consoleStopping(userMessage: string): AppError {
  return new AppError("unavailable:stopping", { userMessage });
}

/**
 * Between batches: refuses to go on once the console stops, saves the progress and extends the
 * lease. Returns whether a cancel was requested (the job decides how it ends then).
 */
export async function betweenBatches(
  ctx: JobContext,
  progress: JobProgress,
  stoppingMessage: string,
): Promise<{ cancelRequested: boolean }> {
  if (ctx.signal.aborted) throw consoleStopping(stoppingMessage);
  const r = await ctx.checkpoint({ progress });
  return { cancelRequested: r.cancelRequested };
}

/**
 * Letters per second since the run started (one decimal; 0 in the first half second) and the
 * seconds left at that pace; before there is a pace, at `fallbackRate` (null: not known).
 */
export function pace(o: {
  done: number;
  doneAtStart: number;
  seconds: number;
  left: number;
  fallbackRate: number | null;
}): { rate: number; eta: number | null } {
  const rate = o.seconds > 0.5 ? Math.round(((o.done - o.doneAtStart) / o.seconds) * 10) / 10 : 0;
  const eta =
    o.left === 0
      ? 0
      : rate > 0
        ? Math.round(o.left / rate)
        : o.fallbackRate !== null
          ? Math.round(o.left / o.fallbackRate)
          : null;
  return { rate, eta };
}

/** The job, its DLQ and the user it acts for: whose name its operation rows carry. */
export interface LedgerJobContext {
  jobId: string;
  connectionId: string;
  queue: string;
  actor: { id: string | null; email: string | null; role: string | null };
}

/**
 * The end of a run, on record (`action`, e.g. "redrive.finished": the state, the result's summary
 * and the progress), in the name of the job's starter; the outcome the worker stores.
 */
export async function finishLedgerJob(
  op: LedgerJobContext,
  action: string,
  state: "succeeded" | "cancelled",
  progress: JobProgress,
  result: JobResult,
): Promise<JobOutcome> {
  const withResult = { ...progress, result };
  await recordAudit({
    actor: op.actor as never,
    action,
    outcome: resultOutcome(result),
    operationId: op.jobId,
    connectionId: op.connectionId,
    queue: op.queue,
    target: op.jobId,
    details: { state, summary: result.summary, ...withResult },
  });
  return { state, progress: withResult };
}
