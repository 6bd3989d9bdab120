import "server-only";
import { recordAudit, SYSTEM_ACTOR } from "@/lib/audit";
import { getAdapter } from "@/lib/connections/registry";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { loadPlan, pinPaused, resumeJob } from "./control";
import { auditRefusal, runnerRefusal } from "./runner-check";

/**
 * Resumes redrives that paused themselves because their broker could not be reached
 * (`progress.autoResume`), once that broker answers a ping again. Run by every console's job
 * worker as a maintenance task (DLQ_REDRIVE_AUTO_RESUME_MS, default 10 s): resuming is one
 * conditional UPDATE (paused → running with an expired lease), so when several consoles see the
 * broker back at once, one resumes the job and the next claim anywhere runs it. Audited
 * `redrive.auto_resume` as a system action. A job whose users may no longer run it (runner-check.ts)
 * is not resumed: it is pinned paused with the reason, audited as a denied auto-resume. Returns
 * the ids it resumed.
 */
export async function resumeReachable(
  deps: { db?: () => PrismaClient; adapterFor?: (connectionId: string) => BrokerAdapter; jobIds?: string[] } = {},
): Promise<string[]> {
  const db = (deps.db ?? getDb)();
  const adapterFor = deps.adapterFor ?? getAdapter;
  const rows = await db.$queryRawUnsafe<
    Array<{ id: string; connection_id: string; queue: string; reason: string | null }>
  >(
    `SELECT id::text AS id, connection_id, queue, progress->>'pauseReason' AS reason FROM jobs
     WHERE kind = 'redrive' AND state = 'paused' AND NOT cancel_requested AND progress->>'autoResume' = 'true'
       AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))
     ORDER BY created_at LIMIT 100`,
    deps.jobIds ?? null,
  );
  const answers = new Map<string, boolean>();
  const resumed: string[] = [];
  for (const r of rows) {
    let up = answers.get(r.connection_id);
    if (up === undefined) {
      up = await adapterFor(r.connection_id)
        .ping()
        .then(() => true)
        .catch(() => false);
      answers.set(r.connection_id, up);
    }
    if (!up) continue;
    const plan = await loadPlan(db, r.id);
    const params = (await db.job.findUnique({ where: { id: r.id }, select: { params: true } }))?.params ?? null;
    const refusal = plan ? await runnerRefusal(plan, params) : null;
    if (plan && refusal) {
      if (await pinPaused(db, r.id, refusal.reason)) await auditRefusal(plan, refusal, "redrive.auto_resume");
      continue;
    }
    if (!(await resumeJob(db, r.id, { resetBreaker: false, onlyIfAutoResume: true }))) continue;
    resumed.push(r.id);
    await recordAudit({
      actor: SYSTEM_ACTOR,
      action: "redrive.auto_resume",
      outcome: "success",
      operationId: r.id,
      connectionId: r.connection_id,
      queue: r.queue,
      target: r.id,
      details: { pausedFor: r.reason },
    });
  }
  return resumed;
}
