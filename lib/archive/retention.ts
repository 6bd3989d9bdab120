import "server-only";
import { recordAudit, SYSTEM_ACTOR } from "@/lib/audit";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { archiveRetentionDays, deleteExpiredArchive } from "./store";

/**
 * The archive's retention sweep (a job-worker maintenance task, hourly): deletes rows past their
 * expiry (DLQ_ARCHIVE_RETENTION_DAYS after the discard, fixed when the row was written) and
 * records one audit row as a system action, with the count per DLQ. Nothing is recorded when
 * nothing expired.
 */
export async function sweepArchive(db: PrismaClient = getDb()): Promise<number> {
  const r = await deleteExpiredArchive(db);
  if (r.count === 0) return 0;
  await recordAudit({
    actor: SYSTEM_ACTOR,
    action: "archive.retention",
    outcome: "success",
    details: {
      deleted: r.count,
      byDlq: r.byDlq.slice(0, 50).map((d) => `${d.connectionId}/${d.queue}: ${d.n}`),
      retentionDays: archiveRetentionDays(),
    },
  });
  return r.count;
}
