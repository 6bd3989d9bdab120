import "server-only";
import type { AuditEntry } from "@/lib/audit/types";
import type { JobRecord } from "./types";

/**
 * An audit entry a job writes on behalf of the user who started it: the job's DLQ, the job id as
 * operation id (the use case that queued it wrote the start under the same id). By default an
 * operation-level success whose target is the job; `fields` overrides (per-letter rows, outcomes).
 */
export function jobAuditEntry(job: Pick<JobRecord, "id" | "createdBy" | "connectionId" | "queue">, action: string, fields: Partial<AuditEntry> = {}): AuditEntry {
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
