import "server-only";
import { recordAudit, type AuditActor } from "@/lib/audit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import type { PrismaClient } from "@/lib/generated/prisma/client";

type Db = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

/**
 * Lost removals of a discard. AMQP 0-9-1 never confirms an ack: when the connection breaks right
 * after a batch's acks went out, RabbitMQ may not have taken them, and it puts those letters back
 * in the DLQ although the ledger says "discarded" and the archive holds their copy (an undo would
 * then make two). Such letters are flagged with their outcome (`leftover_check`, see
 * recordDiscardOutcomes); before anything else touches the DLQ's discarded letters again (the
 * discard's own resumed run, the next discard of that DLQ, an undo of that discard) their DLQ copy
 * is looked for and removed, and the removal is audited under the discard's operation id.
 */

/** Flagged letters per discard of this DLQ (or of these discards), at most `limit` (a broken batch flags at most one batch). */
async function flaggedRows(
  db: Db,
  dlq: { connectionId: string; queue: string },
  jobIds: string[] | null,
  limit: number,
) {
  return db.$queryRawUnsafe<
    Array<{ job_id: string; letter_id: string; sha256: string; accept_risk: boolean; archived: boolean }>
  >(
    `SELECT d.job_id::text AS job_id, d.letter_id, d.sha256, p.accept_risk,
            (a.id IS NOT NULL AND a.restore_state IS DISTINCT FROM 'restored') AS archived
     FROM discard_letters d
     JOIN discard_plans p ON p.job_id = d.job_id
     LEFT JOIN archived_letters a ON a.id = d.archive_id
     WHERE d.leftover_check AND p.connection_id = $1 AND p.queue = $2 AND ($3::uuid[] IS NULL OR d.job_id = ANY($3::uuid[]))
     ORDER BY d.job_id, d.seq LIMIT $4`,
    dlq.connectionId,
    dlq.queue,
    jobIds,
    limit,
  );
}

/** Clears the flags of letters that were looked for; `removed` ones get a note in their reason. */
async function clearFlags(
  db: Db,
  jobId: string,
  letterIds: string[],
  removed: string[],
  kept: string[],
): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE discard_letters SET leftover_check = false, updated_at = now(),
       reason = CASE WHEN letter_id = ANY($3::text[]) THEN 'Discarded; the connection broke before the broker had taken the DLQ copy away, so that copy came back to the DLQ and was removed later (the archive copy was written first).'
                     WHEN letter_id = ANY($4::text[]) THEN 'Discarded (the archive copy was written first); the connection broke before the broker had surely taken the DLQ copy away. This letter has no id of its own, so the console cannot tell a copy that came back from an identical letter that was never discarded, and removed nothing: the DLQ may still hold it.'
                     ELSE reason END
     WHERE job_id = $1::uuid AND letter_id = ANY($2::text[])`,
    jobId,
    letterIds,
    removed,
    kept,
  );
}

export interface LeftoverCheck {
  /** Who the removal is recorded for (the run's or the undo's actor), and what triggered it. */
  actor: AuditActor;
  by: string;
  signal?: AbortSignal;
  /** Only these discards' letters (an undo of one discard); default every discard of the DLQ. */
  jobIds?: string[];
}

/**
 * Looks for the DLQ copies of flagged letters and removes them (checksum checked by the adapter),
 * then clears the flags, found or not. A letter whose archive copy is gone or was put back by an
 * undo is not removed (the copy in the DLQ may be the one the undo put back). A broker that cannot
 * be reached throws: the flags stay for the next time. Returns the counts.
 */
export async function removeDiscardLeftovers(
  db: Db,
  adapter: BrokerAdapter,
  dlq: { connectionId: string; queue: string },
  check: LeftoverCheck,
): Promise<{ checked: number; removed: number }> {
  let checked = 0;
  let removedTotal = 0;
  for (;;) {
    const rows = await flaggedRows(db, dlq, check.jobIds ?? null, 1000);
    if (rows.length === 0) return { checked, removed: removedTotal };
    const byJob = new Map<string, typeof rows>();
    for (const r of rows) byJob.set(r.job_id, [...(byJob.get(r.job_id) ?? []), r]);
    for (const [jobId, letters] of byJob) {
      const wanted = letters.filter((r) => r.archived);
      const removed: string[] = [];
      const kept: string[] = [];
      if (wanted.length > 0 && adapter.removeLetters) {
        const results = adapter.removeLetters(
          dlq.queue,
          wanted.map((r) => ({ letterId: r.letter_id, sha256: r.sha256 })),
          {
            operationId: jobId,
            acceptRisk: letters[0].accept_risk,
            signal: check.signal,
            // Its archive copy was written (and committed) by the discard: nothing to write again.
            beforeRemove: async () => undefined,
            // A letter known only by its content could be answered by an identical twin that was never discarded.
            ownIdentityOnly: true,
          },
        );
        for await (const r of results) {
          if (r.outcome === "removed") removed.push(r.letterId);
          else if (r.contentIdentified) kept.push(r.letterId);
        }
      }
      // Audited before the flags go: a crash between the two checks again (and finds nothing), never a silent removal.
      await recordAudit({
        actor: check.actor,
        action: "discard.leftovers_removed",
        outcome: "success",
        operationId: jobId,
        connectionId: dlq.connectionId,
        queue: dlq.queue,
        target: jobId,
        details: {
          checked: letters.length,
          removed: removed.length,
          letterIds: removed,
          keptContentIdentified: kept.length,
          skipped: letters.length - wanted.length,
          by: check.by,
        },
      });
      await clearFlags(
        db,
        jobId,
        letters.map((r) => r.letter_id),
        removed,
        kept,
      );
      checked += letters.length;
      removedTotal += removed.length;
    }
  }
}

/** How many letters of this discard wait for the leftover check. */
export async function countLeftovers(db: Db, jobId: string): Promise<number> {
  const r = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM discard_letters WHERE job_id = $1::uuid AND leftover_check`,
    jobId,
  );
  return Number(r[0]?.n ?? 0);
}

/**
 * The leftover check for DLQs that nothing else touches: letters flagged by a discard that ended
 * failed wait for the next discard of their DLQ or an undo; this maintenance round (job worker,
 * every minute) removes them once the broker answers, for DLQs no job holds right now. A DLQ whose
 * broker is still away keeps its flags for the next round. Two replicas sweeping at once may both
 * look; the second finds the copies gone and only adds an audit row saying so.
 */
export async function sweepDiscardLeftovers(
  db: Db,
  adapterFor: (connectionId: string) => BrokerAdapter,
  limit = 20,
): Promise<{ dlqs: number; removed: number }> {
  const dlqs = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string }>>(
    `SELECT DISTINCT p.connection_id, p.queue
     FROM discard_letters d JOIN discard_plans p ON p.job_id = d.job_id
     WHERE d.leftover_check
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.connection_id = p.connection_id AND j.queue = p.queue AND j.state IN ('queued', 'running', 'paused', 'cancelling'))
     LIMIT $1`,
    limit,
  );
  let removed = 0;
  let swept = 0;
  for (const d of dlqs) {
    const dlq = { connectionId: d.connection_id, queue: d.queue };
    try {
      const r = await removeDiscardLeftovers(db, adapterFor(dlq.connectionId), dlq, {
        actor: { id: null, email: null, role: null },
        by: "leftover sweep",
      });
      removed += r.removed;
      swept++;
    } catch (e) {
      console.warn(
        `[discard] leftover check of ${dlq.connectionId}/${dlq.queue} waits for its broker: ${(e as Error).message}`,
      );
    }
  }
  return { dlqs: swept, removed };
}
