import { parseQuery } from "@/lib/api/query";
import { apiJson, apiRoute } from "@/lib/api/route";
import { auditFilterOf, auditQuerySchema, toAuditPage } from "@/lib/api/v1";
import { viewAudit } from "@/lib/audit-log/use-cases";
import { authorize } from "@/lib/auth/authorize";

export const dynamic = "force-dynamic";

/** One page of the audit log by cursor (lib/api/v1/audit.ts); viewAudit authorizes and audits. */
export const GET = apiRoute(async (actor, meta, req) => {
  // Refused before the query is read: a role without audit:read learns nothing, not even what a valid query is.
  await authorize(actor, "audit:read", { action: "audit.view", meta });
  const q = parseQuery(auditQuerySchema, req);
  const page = await viewAudit(actor, meta, { filter: auditFilterOf(q), before: q.cursor, limit: q.limit });
  return apiJson(toAuditPage(page));
});
