import "server-only";
import { recordAudit } from "@/lib/audit";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import { auditActor, errorCodeOf, jobActEntry } from "@/lib/use-case/audited";
import { wakeJobWorker } from "../process-worker";
import { jobStore } from "../store";
import type { JobRecord } from "../types";

/**
 * Audits a start that failed before its job existed (so no operation id): `action` failure with
 * the error's code (`codeOf`, errorCodeOf by default). Never hides the error it records.
 */
export function startFailure(
  actor: Actor,
  meta: RequestMeta,
  action: string,
  dlq: { connectionId: string; queue: string },
  codeOf: (e: unknown) => string = errorCodeOf,
): (e: unknown) => Promise<unknown> {
  return (e) =>
    recordAudit({
      actor: auditActor(actor),
      action,
      outcome: "failure",
      connectionId: dlq.connectionId,
      queue: dlq.queue,
      requestId: meta.requestId,
      ip: meta.ip,
      details: { error: codeOf(e) },
    }).catch(() => undefined);
}

/**
 * The columns every ledger job's plan has (redrive_plans, discard_plans): its job, its DLQ and the
 * selection, the count in its ledger, whether a risky read was accepted, and who started it.
 */
export function ledgerPlanFields(
  jobId: string,
  p: { connectionId: string; queue: string; selection: unknown; acceptRisk: boolean },
  total: number,
  actor: Actor,
) {
  return {
    jobId,
    connectionId: p.connectionId,
    queue: p.queue,
    selection: p.selection as Prisma.InputJsonObject,
    total,
    acceptRisk: p.acceptRisk,
    createdById: actor.id,
    createdByEmail: actor.email,
    createdByRole: actor.role,
  };
}

/** What starting one kind of ledger job takes; see startLedgerJob. */
export interface LedgerJobStart<P> {
  kind: "redrive" | "discard";
  /** The start's audit action ("redrive.start"). */
  action: string;
  connectionId: string;
  queue: string;
  params: Prisma.InputJsonObject;
  /**
   * Inside the transaction, once the job row exists: fills its ledger, checks the count the user
   * confirmed, creates its plan, and says the progress the job starts with.
   */
  build: (tx: Prisma.TransactionClient, jobId: string) => Promise<{ plan: P; progress: Prisma.InputJsonObject }>;
  /** Audits a failed start (startFailure). */
  failed: (e: unknown) => Promise<unknown>;
  /** The success row's details, from the plan. */
  details: (plan: P) => Record<string, unknown>;
}

/**
 * Creates a ledger job, its ledger and its plan in one transaction (a count that changed since the
 * user confirmed it creates nothing), audits the start under the job's id (a failure without
 * one), and wakes the worker. Returns the job as stored now, with its plan.
 */
export async function startLedgerJob<P>(
  actor: Actor,
  meta: RequestMeta,
  s: LedgerJobStart<P>,
): Promise<{ job: JobRecord; plan: P }> {
  const created = await getDb()
    .$transaction(
      async (tx) => {
        const job = await tx.job.create({
          data: {
            kind: s.kind,
            connectionId: s.connectionId,
            queue: s.queue,
            params: s.params,
            createdBy: actor.id,
          },
        });
        const { plan, progress } = await s.build(tx, job.id);
        await tx.job.update({ where: { id: job.id }, data: { progress } });
        return { job, plan };
      },
      { timeout: 120_000, maxWait: 15_000 },
    )
    .catch(async (e) => {
      await s.failed(e);
      throw e;
    });
  await recordAudit(jobActEntry(actor, meta, created.job, s.action, "success", s.details(created.plan)));
  wakeJobWorker();
  return { job: (await jobStore().get(created.job.id))!, plan: created.plan };
}
