import "server-only";
import { recordAudit, SYSTEM_ACTOR } from "@/lib/audit";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { jobStore } from "@/lib/jobs/store";
import { GROUPING_VERSION } from "./grouping";

/**
 * A DLQ's groups are made under one GROUPING_VERSION. Each scan stamps its version in its progress
 * (`groupingVersion`; scans from before the stamp were version 1). A complete scan rewrites the key
 * of every letter present and recomputes the groups from them; a cancelled or partial one rewrites
 * only what it read, so after a version change its groups would mix old and new keys (one failure
 * in two groups). The index is current again once one complete scan ran under the current version.
 */
type Db = Pick<PrismaClient, "$queryRawUnsafe">;

const STALE = `bool_or(state = 'succeeded')
   AND NOT COALESCE(bool_or(state = 'succeeded' AND progress->'partial' IS NULL
                            AND COALESCE((progress->>'groupingVersion')::int, 1) = $1), false)`;

/** The DLQ's groups were made (wholly or partly) under an older grouping: a complete scan regroups them. */
export async function groupedByOlderVersion(
  dlq: { connectionId: string; queue: string },
  db: Db = getDb(),
): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ stale: boolean }>>(
    `SELECT ${STALE} AS stale FROM jobs WHERE kind = 'scan' AND connection_id = $2 AND queue = $3`,
    GROUPING_VERSION,
    dlq.connectionId,
    dlq.queue,
  );
  return rows[0]?.stale === true;
}

/**
 * Queues one scan, in the name of the system, of each DLQ whose groups are older than
 * GROUPING_VERSION where `readsFree` says reading it costs nothing (a DLQ whose reads count against
 * its letters is never read on the console's own: its triage page says a scan regroups it). One try
 * per DLQ and version (`params.regroupTo`), none while a scan is queued or running. Audited
 * `triage.scan_start`. Returns the DLQs queued.
 */
export async function regroupStaleDlqs(
  readsFree: (connectionId: string) => boolean,
  db: Db = getDb(),
): Promise<Array<{ connectionId: string; queue: string; jobId: string }>> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string }>>(
    `SELECT connection_id, queue FROM jobs WHERE kind = 'scan' GROUP BY connection_id, queue
      HAVING ${STALE}
         AND NOT bool_or(state IN ('queued', 'running', 'paused', 'cancelling'))
         AND NOT COALESCE(bool_or((params->>'regroupTo')::int = $1), false)
      ORDER BY connection_id, queue`,
    GROUPING_VERSION,
  );
  const queued: Array<{ connectionId: string; queue: string; jobId: string }> = [];
  for (const r of rows) {
    if (!readsFree(r.connection_id)) continue;
    const job = await jobStore().enqueue({
      kind: "scan",
      connectionId: r.connection_id,
      queue: r.queue,
      params: { regroupTo: GROUPING_VERSION },
      createdBy: null,
    });
    await recordAudit({
      actor: SYSTEM_ACTOR,
      action: "triage.scan_start",
      outcome: "success",
      operationId: job.id,
      connectionId: r.connection_id,
      queue: r.queue,
      target: job.id,
      details: { jobId: job.id, regroupTo: GROUPING_VERSION },
    });
    queued.push({ connectionId: r.connection_id, queue: r.queue, jobId: job.id });
  }
  return queued;
}
