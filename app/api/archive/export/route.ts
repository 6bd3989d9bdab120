import { archiveRowsToCsv } from "@/lib/archive/export";
import { parseArchiveParams } from "@/lib/archive/params";
import { exportArchive } from "@/lib/archive/use-cases";
import { AppError } from "@/lib/errors";
import { exportFormat, exportResponse } from "@/lib/http/export-stream";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/**
 * The filtered archive as CSV or a JSON array, streamed in keyset batches (bounded memory):
 * ?format=csv|json&payload=1 (payloads need letter:read-payload, masked for the role) plus the
 * archive filters, and `id` (repeated) for hand-picked rows.
 */
export const GET = sessionRoute(async ({ actor, meta, search }) => {
  const format = exportFormat(search);
  const withPayload = search.get("payload") === "1";
  const parsed = parseArchiveParams(search);
  if (!parsed.ok) throw new AppError("bad_request:filter", { userMessage: parsed.message });
  const ids = search.getAll("id").slice(0, 10_000);
  const { count, rows } = await exportArchive(actor, meta, {
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
});
