import "server-only";
import type { JobProgress } from "@/lib/jobs/types";
import type { PrismaClient, RedrivePlan } from "@/lib/generated/prisma/client";
import { fenced } from "./ledger";
import type { Stage } from "./plan";

type Db = PrismaClient;
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/**
 * Stage and pause control of a redrive job. The jobs table has states but no pause verb: a
 * redrive pauses itself (state `paused`, lease dropped, still holding its DLQ so no scan slips in)
 * and is resumed by making it a running job whose lease has expired, which the next claim takes.
 */

export function loadPlan(db: Db, jobId: string): Promise<RedrivePlan | null> {
  return db.redrivePlan.findUnique({ where: { jobId } });
}

/** With `owner`, under the lease fence of the job's ledger (ledger.ts, `fenced`): a run whose lease was taken over changes nothing. */
export async function setStage(
  db: Db,
  jobId: string,
  stage: Stage,
  extra: { watchUntil?: Date | null; sampleVerdict?: string | null; sampleReturned?: number } = {},
  owner?: string,
): Promise<void> {
  await fenced(db, jobId, owner, (tx) =>
    (tx as Db).redrivePlan.update({ where: { jobId }, data: { stage, ...extra } }),
  );
}

/**
 * Called by the handler under its lease. Returns false when the job was not running under this
 * owner any more (cancel requested, or lease lost): the caller then stops.
 */
export async function pauseSelf(
  db: Db,
  jobId: string,
  owner: string,
  reason: string,
  progress: JobProgress,
): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE jobs SET state = 'paused', lease_owner = NULL, lease_expires_at = NULL, heartbeat_at = now(), progress = COALESCE($3::jsonb, progress)
     WHERE id = $1::uuid AND lease_owner = $2 AND state = 'running' AND NOT cancel_requested`,
    jobId,
    owner,
    json({ ...progress, pauseReason: reason }),
  );
  if (n !== 1) return false;
  await db.redrivePlan.update({ where: { jobId }, data: { pauseRequested: false, pauseReason: reason } });
  return true;
}

/**
 * A redrive paused because its broker went away resumes by itself once the broker answers
 * (`progress.autoResume`, set by the handler). An operator who wants it to stay paused pins it:
 * it then waits for an explicit resume. Returns false when it was not such a job.
 */
export async function pinPaused(db: Db, jobId: string, reason: string): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE jobs SET progress = jsonb_set(jsonb_set(progress, '{autoResume}', 'false'), '{pauseReason}', to_jsonb($2::text))
     WHERE id = $1::uuid AND state = 'paused' AND progress->>'autoResume' = 'true'`,
    jobId,
    reason,
  );
  if (n !== 1) return false;
  await db.redrivePlan.update({ where: { jobId }, data: { pauseReason: reason } });
  return true;
}

/** Operator's pause: a running job pauses at its next batch (or during its watch). */
export async function requestPause(db: Db, jobId: string, reason: string): Promise<void> {
  await db.redrivePlan.update({ where: { jobId }, data: { pauseRequested: true, pauseReason: reason } });
}

/** paused → running with an expired lease: the next claim (any console) resumes it from the ledger. */
export async function resumeJob(
  db: Db,
  jobId: string,
  opts: { resetBreaker: boolean; onlyIfAutoResume?: boolean },
): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE jobs SET state = 'running', lease_owner = NULL, lease_expires_at = now() - interval '1 millisecond'
     WHERE id = $1::uuid AND state = 'paused' AND NOT cancel_requested AND (NOT $2 OR progress->>'autoResume' = 'true')`,
    jobId,
    opts.onlyIfAutoResume ?? false,
  );
  if (n !== 1) return false;
  await db.redrivePlan.update({
    where: { jobId },
    data: { pauseRequested: false, pauseReason: null, ...(opts.resetBreaker ? { breakerResetAt: new Date() } : {}) },
  });
  return true;
}

/**
 * Stage 2: awaiting_bulk and paused → bulk and running (expired lease), in one statement guarded on
 * both, so that of two concurrent starts (or a start racing a cancel) exactly one wins and the
 * loser changes nothing: a read-then-write in two steps let a loser put the stage back to
 * awaiting_bulk under a job the winner had already set running, and the next claim paused it again.
 */
export async function startBulkStage(
  db: Db,
  jobId: string,
  by: string,
  overrideReason: string | null,
): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `WITH resumed AS (
       UPDATE jobs SET state = 'running', lease_owner = NULL, lease_expires_at = now() - interval '1 millisecond'
       WHERE id = $1::uuid AND state = 'paused' AND NOT cancel_requested
         AND EXISTS (SELECT 1 FROM redrive_plans WHERE job_id = $1::uuid AND stage = 'awaiting_bulk')
       RETURNING id)
     UPDATE redrive_plans SET stage = 'bulk', bulk_started_by = $2, bulk_override_reason = $3, breaker_reset_at = now(),
       pause_requested = false, pause_reason = NULL, updated_at = now()
     WHERE job_id IN (SELECT id FROM resumed)`,
    jobId,
    by,
    overrideReason,
  );
  return n === 1;
}
