import { auditRowsToCsv } from "@/lib/audit";
import { operationRoute } from "@/lib/api/route";
import { auditFilterOf, exportAuditOperation, ndjsonResponse, toAuditExportRows } from "@/lib/api/v1";
import { exportAudit } from "@/lib/audit-log/use-cases";
import { exportResponse } from "@/lib/http/export-stream";

export const dynamic = "force-dynamic";

/**
 * The whole filtered audit log, streamed (lib/api/v1/audit.ts). Refused before the query is read,
 * under the action exportAudit audits; exportAudit authorizes again, audits the export and yields
 * rows batch by batch, so the answer flows without holding the log in memory.
 */
export const GET = operationRoute(
  exportAuditOperation,
  { permission: "audit:read", action: "audit.export" },
  async ({ actor, meta, query }) => {
    // The export is recorded with the format asked for (csv, json or ndjson: JSON rows framed by lines).
    const rows = await exportAudit(actor, meta, { filter: auditFilterOf(query), format: query.format });
    if (query.format === "csv")
      return exportResponse({
        rows,
        format: "csv",
        toCsv: (batch, header) => auditRowsToCsv(batch, { header }),
        filenamePrefix: "audit",
      });
    if (query.format === "ndjson") return ndjsonResponse(toAuditExportRows(rows), { filenamePrefix: "audit" });
    return exportResponse({ rows: toAuditExportRows(rows), format: "json", toCsv: () => "", filenamePrefix: "audit" });
  },
);
