import { auditRowsToCsv } from "@/lib/audit";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { exportAudit, parseAuditFilter } from "@/lib/audit-log/use-cases";
import { errorResponse } from "@/lib/use-case/http";
import { exportFormat, exportResponse } from "@/lib/http/export-stream";

export const dynamic = "force-dynamic";

/** Streams matching audit rows as CSV or a JSON array, batch by batch: memory stays bounded. */
export async function GET(req: Request) {
  try {
    const actor = await requireActor();
    const params = new URL(req.url).searchParams;
    const format = exportFormat(params);
    const filter = parseAuditFilter(params);
    const rows = await exportAudit(actor, await requestMeta(), { filter, format });
    return exportResponse({
      rows,
      format,
      toCsv: (batch, header) => auditRowsToCsv(batch, { header }),
      filenamePrefix: "audit",
    });
  } catch (e) {
    return errorResponse(e);
  }
}
