import "server-only";
import type { AuditActor } from "@/lib/audit/types";
import type { JobResult } from "../accounting";
import { recordCancelledResult } from "../cancelled-result";
import { jobStore } from "../store";
import type { JobRecord, JobState } from "../types";
import type { LedgerDb } from "./queries";

/** Who started a ledger job, as its plan records them: the job's final audit row is theirs. */
export interface LedgerJobStarter {
  createdById: string | null;
  createdByEmail: string | null;
  createdByRole: string | null;
}

/**
 * Requests a ledger job's cancel: queued (or paused, unless `runPaused` leaves it to a worker) it
 * ends at once, running at its next batch. `record` runs first, in the request's transaction (an
 * audit row that commits with the request). A job ended here never reaches a worker's finish, so
 * the cancel writes the result that finish would (`result`, from the ledger), as `finishedAction`
 * in the starter's name. Returns the job's state after the request.
 */
export function cancelLedgerJob(
  job: JobRecord,
  starter: LedgerJobStarter,
  c: {
    finishedAction: string;
    result: (tx: LedgerDb) => Promise<JobResult>;
    runPaused?: boolean;
    record?: (tx: LedgerDb, state: JobState) => Promise<unknown>;
  },
): Promise<JobState> {
  const startedBy: AuditActor = { id: starter.createdById, email: starter.createdByEmail, role: starter.createdByRole };
  return jobStore().requestCancel(job.id, { runPaused: c.runPaused }, async (tx, state) => {
    await c.record?.(tx, state);
    if (state !== "cancelled") return;
    await recordCancelledResult(tx, job, await c.result(tx), { action: c.finishedAction, startedBy });
  });
}
