import "server-only";
import type { AuditEvent } from "@/lib/generated/prisma/client";
import type { AuditOutcome, AuditRow } from "./types";

export function toRow(e: AuditEvent): AuditRow {
  return {
    id: e.id.toString(),
    operationId: e.operationId,
    scope: e.scope,
    at: e.at.toISOString(),
    actorId: e.actorId,
    actorEmail: e.actorEmail,
    actorRole: e.actorRole,
    action: e.action,
    outcome: e.outcome as AuditOutcome,
    connectionId: e.connectionId,
    queue: e.queue,
    target: e.target,
    requestId: e.requestId,
    ip: e.ip,
    details: (e.details as Record<string, unknown> | null) ?? null,
    prevHash: e.prevHash,
    hash: e.hash,
    keyId: e.keyId,
  };
}
