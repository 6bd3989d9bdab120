import "server-only";
import type { AuditEntry } from "@/lib/audit/types";
import type { JobKind, JobRecord } from "./types";

/**
 * An audit entry a job writes on behalf of the user who started it: the job's DLQ, the job id as
 * operation id (the use case that queued it wrote the start under the same id). By default an
 * operation-level success whose target is the job; `fields` overrides (per-letter rows, outcomes).
 */
export function jobAuditEntry(
  job: Pick<JobRecord, "id" | "createdBy" | "connectionId" | "queue">,
  action: string,
  fields: Partial<AuditEntry> = {},
): AuditEntry {
  return {
    actor: { id: job.createdBy, email: null, role: null },
    action,
    outcome: "success",
    operationId: job.id,
    connectionId: job.connectionId,
    queue: job.queue,
    target: job.id,
    ...fields,
  };
}

/** The action under which each kind records its end (success, cancel, and failure alike). */
const END_ACTIONS: Record<JobKind, string> = {
  scan: "triage.scan_finished",
  redrive: "redrive.finished",
  discard: "discard.finished",
  "safe-move": "dlq.safe_move_finished",
  "group-skip": "group.skip_finished",
};

/**
 * A job that ended failed, on record for its creator under its operation id, with the reason the
 * job page shows (the user message, never the raw exception). Written by the worker for every kind,
 * so no handler can forget it; a kind not listed (a test's or a script's own) records `job.failed`.
 */
export function jobFailedEntry(
  job: Pick<JobRecord, "id" | "kind" | "createdBy" | "connectionId" | "queue">,
  reason: string,
): AuditEntry {
  const action = (END_ACTIONS as Record<string, string>)[job.kind] ?? "job.failed";
  return jobAuditEntry(job, action, {
    outcome: "failure",
    details: { state: "failed", kind: job.kind, error: reason },
  });
}
