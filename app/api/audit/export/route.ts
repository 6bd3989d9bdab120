import { auditRowsToCsv } from "@/lib/audit";
import { exportAudit, parseAuditFilter } from "@/lib/audit-log/use-cases";
import { exportFormat, exportResponse } from "@/lib/http/export-stream";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Streams matching audit rows as CSV or a JSON array, batch by batch: memory stays bounded. */
export const GET = sessionRoute(async ({ actor, meta, search }) => {
  const format = exportFormat(search);
  const rows = await exportAudit(actor, meta, { filter: parseAuditFilter(search), format });
  return exportResponse({
    rows,
    format,
    toCsv: (batch, header) => auditRowsToCsv(batch, { header }),
    filenamePrefix: "audit",
  });
});
