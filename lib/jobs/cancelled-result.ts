import "server-only";
import { recordAuditIn } from "@/lib/audit";
import type { AuditEntry } from "@/lib/audit/types";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { resultOutcome, type JobResult } from "./accounting";

type Tx = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

/**
 * A job a cancel ended at once (queued, or paused with nothing left to clean up) never reaches a
 * handler's finish: the cancel writes what a finish would, in the same transaction. The result
 * goes into the job's progress (its page, the lists and the API's `progress.result`) and the
 * job's final audit row (`entry`, the kind's end action) carries it with the same outcome rule.
 */
export async function recordCancelledResult(
  tx: Tx,
  job: { id: string; connectionId: string; queue: string },
  result: JobResult,
  end: {
    /** The kind's end action (`redrive.finished`, `discard.finished`). */
    action: string;
    /** Who started the job: its final row is theirs, as a worker's finish would write it. */
    startedBy: AuditEntry["actor"];
  },
): Promise<void> {
  const rows = await tx.$queryRawUnsafe<Array<{ progress: Record<string, unknown> | null }>>(
    `UPDATE jobs SET progress = COALESCE(progress, '{}'::jsonb) || jsonb_build_object('result', $2::jsonb)
      WHERE id = $1::uuid RETURNING progress`,
    job.id,
    JSON.stringify(result),
  );
  await recordAuditIn(tx, {
    actor: end.startedBy,
    action: end.action,
    operationId: job.id,
    connectionId: job.connectionId,
    queue: job.queue,
    target: job.id,
    outcome: resultOutcome(result),
    details: { ...(rows[0]?.progress ?? {}), state: "cancelled", summary: result.summary, result },
  });
}
