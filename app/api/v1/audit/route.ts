import { operationRoute } from "@/lib/api/route";
import { auditFilterOf, listAuditOperation, toAuditPage } from "@/lib/api/v1";
import { viewAudit } from "@/lib/audit-log/use-cases";

export const dynamic = "force-dynamic";

/**
 * One page of the audit log by cursor (lib/api/v1/audit.ts). Refused before the query is read: a
 * role without audit:read learns nothing, not even what a valid query is; viewAudit audits the read.
 */
export const GET = operationRoute(
  listAuditOperation,
  { permission: "audit:read", action: "audit.view" },
  async ({ actor, meta, query }) =>
    toAuditPage(
      await viewAudit(actor, meta, { filter: auditFilterOf(query), before: query.cursor, limit: query.limit }),
    ),
);
