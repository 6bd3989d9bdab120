import { z } from "zod";
import type { AuditFilter } from "@/lib/audit";
import type { AuditPage } from "@/lib/audit-log/use-cases";
import { AppError } from "@/lib/errors";
import { defineOperation } from "../registry";

const text = z.string().trim().min(1).max(200).optional();

export const auditQuerySchema = z.object({
  actor: text.meta({ description: "Actor email, case-insensitive substring." }),
  action: text.meta({ description: "Exact action, or a prefix ending in . or * (auth. or auth.*)." }),
  queue: text,
  connectionId: text,
  outcome: z.enum(["success", "denied", "failure"]).optional(),
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Rows at or after this instant (ISO 8601)." }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Rows at or before this instant (ISO 8601)." }),
  cursor: z.string().trim().min(1).max(100).optional().meta({ description: "`nextCursor` of the previous page." }),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const auditRowSchema = z
  .object({
    id: z.string(),
    at: z.iso.datetime(),
    actorId: z.string().nullable(),
    actorEmail: z.string().nullable(),
    actorRole: z.string().nullable(),
    action: z.string(),
    outcome: z.enum(["success", "denied", "failure"]),
    connectionId: z.string().nullable(),
    queue: z.string().nullable(),
    target: z.string().nullable(),
    requestId: z.string().nullable(),
    ip: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable().meta({ description: "Action-specific; rows of token requests carry tokenId." }),
    hash: z.string(),
  })
  .meta({ id: "AuditRow" });

export const auditPageSchema = z
  .object({
    items: z.array(auditRowSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next (older) page; null on the last." }),
  })
  .meta({ id: "AuditPage" });

export const listAuditOperation = defineOperation({
  method: "get",
  tag: "Audit",
  path: "/audit",
  operationId: "listAudit",
  summary: "Audit log, newest first, by cursor",
  description: "One page of audit rows matching the filter. Needs audit:read (operators and admins); the read is audited audit.view, a refusal audit.view denied.",
  problems: [400, 403],
  query: auditQuerySchema,
  response: auditPageSchema,
});

export function auditFilterOf(q: z.output<typeof auditQuerySchema>): AuditFilter {
  const f: AuditFilter = {};
  if (q.actor) f.actor = q.actor;
  if (q.action) f.action = q.action;
  if (q.queue) f.queue = q.queue;
  if (q.connectionId) f.connectionId = q.connectionId;
  if (q.outcome) f.outcome = q.outcome;
  if (q.from) f.from = new Date(q.from);
  if (q.to) f.to = new Date(q.to);
  if (f.from && f.to && f.from > f.to) throw new AppError("bad_request:query", { userMessage: "`from` is after `to`." });
  return f;
}

export function toAuditPage(page: AuditPage): z.output<typeof auditPageSchema> {
  return auditPageSchema.parse({ items: page.rows, nextCursor: page.nextCursor });
}
