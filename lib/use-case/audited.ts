import "server-only";
import { recordAudit } from "@/lib/audit";
import type { AuditEntry } from "@/lib/audit/types";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { asAppError } from "@/lib/errors";

export interface AuditScope {
  action: string;
  connectionId?: string | null;
  queue?: string | null;
  target?: string | null;
}

/** The audit scope of a job's id not yet validated: the id as sent when it is a string. */
export function jobScope(input: unknown, action: string): { action: string; target: string | null } {
  const raw = (input ?? {}) as Record<string, unknown>;
  return { action, target: typeof raw.jobId === "string" ? raw.jobId : null };
}

export function auditActor(actor: Actor) {
  return { id: actor.id, email: actor.email, role: actor.role, ...(actor.tokenId ? { tokenId: actor.tokenId } : {}) };
}

/**
 * The audit row of `actor`'s act on a job (its start, a control, a cancel): the job's DLQ, and the
 * job's id as operation id and target, so every row of one job shares it.
 */
export function jobActEntry(
  actor: Actor,
  meta: RequestMeta,
  job: { id: string; connectionId: string; queue: string },
  action: string,
  outcome: "success" | "failure",
  details: Record<string, unknown>,
): AuditEntry {
  return {
    actor: auditActor(actor),
    action,
    outcome,
    operationId: job.id,
    connectionId: job.connectionId,
    queue: job.queue,
    target: job.id,
    requestId: meta.requestId,
    ip: meta.ip,
    details,
  };
}

export function errorCodeOf(e: unknown): string {
  return asAppError(e)?.code ?? "internal:server";
}

/** Records the outcome of a use case's work once it is authorized: success, or failure with the error code. */
export async function recordOutcome(
  actor: Actor,
  meta: RequestMeta,
  scope: AuditScope,
  outcome: "success" | "failure",
  details?: Record<string, unknown>,
) {
  await recordAudit({
    actor: auditActor(actor),
    action: scope.action,
    outcome,
    connectionId: scope.connectionId ?? null,
    queue: scope.queue ?? null,
    target: scope.target ?? null,
    requestId: meta.requestId,
    ip: meta.ip,
    details: meta.clientRequestId ? { ...details, clientRequestId: meta.clientRequestId } : details,
  });
}

/**
 * Runs authorized work and audits it: success with `details(result)`, or failure with the error
 * code (then rethrows). Audit write failures on the failure path never hide the original error.
 */
export async function audited<T>(
  actor: Actor,
  meta: RequestMeta,
  scope: AuditScope,
  work: () => Promise<T>,
  details?: (result: T) => Record<string, unknown> | undefined,
): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (e) {
    try {
      await recordOutcome(actor, meta, scope, "failure", { error: errorCodeOf(e) });
    } catch (auditError) {
      console.error("audit write failed after a failed action", auditError);
    }
    throw e;
  }
  await recordOutcome(actor, meta, scope, "success", details?.(result));
  return result;
}
