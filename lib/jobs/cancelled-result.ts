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
  jobId: string,
  result: JobResult,
  entry: Omit<AuditEntry, "outcome" | "details">,
): Promise<void> {
  const rows = await tx.$queryRawUnsafe<Array<{ progress: Record<string, unknown> | null }>>(
    `UPDATE jobs SET progress = COALESCE(progress, '{}'::jsonb) || jsonb_build_object('result', $2::jsonb)
      WHERE id = $1::uuid RETURNING progress`,
    jobId,
    JSON.stringify(result),
  );
  await recordAuditIn(tx, {
    ...entry,
    outcome: resultOutcome(result),
    details: { ...(rows[0]?.progress ?? {}), state: "cancelled", summary: result.summary, result },
  });
}
