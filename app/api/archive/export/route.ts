import { archiveRowsToCsv } from "@/lib/archive/export";
import { parseArchiveParams } from "@/lib/archive/params";
import { exportArchive } from "@/lib/archive/use-cases";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { AppError } from "@/lib/errors";
import { exportFormat, exportResponse } from "@/lib/http/export-stream";

export const dynamic = "force-dynamic";

/**
 * The filtered archive as CSV or a JSON array, streamed in keyset batches (bounded memory):
 * ?format=csv|json&payload=1 (payloads need letter:read-payload, masked for the role) plus the
 * archive filters, and `id` (repeated) for hand-picked rows.
 */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const format = exportFormat(p);
    const withPayload = p.get("payload") === "1";
    const actor = await requireActor();
    const parsed = parseArchiveParams(p);
    if (!parsed.ok) throw new AppError("bad_request:filter", { userMessage: parsed.message });
    const ids = p.getAll("id").slice(0, 10_000);
    const { count, rows } = await exportArchive(actor, await requestMeta(), {
      filter: { ...parsed.filter, ...(ids.length ? { ids } : {}) },
      format,
      includePayload: withPayload,
    });
    return exportResponse({
      rows,
      format,
      toCsv: (batch, header) => archiveRowsToCsv(batch, { header, withPayload }),
      filenamePrefix: "archive",
      headers: { "X-Total-Count": String(count) },
    });
  } catch (e) {
    return errorResponse(e);
  }
}
