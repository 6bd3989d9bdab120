import { exportFormat, exportResponse } from "@/lib/http/export-stream";
import { maskingPolicy } from "@/lib/masking/policy";
import { lettersToCsv, maskExportedLetter } from "@/lib/triage/export";
import { parseLetterFilter } from "@/lib/triage/filter-params";
import { exportLetters } from "@/lib/triage/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/**
 * The filtered set as CSV or a JSON array, streamed in keyset batches (bounded memory).
 * ?format=csv|json&payload=1 (payloads need letter:read-payload) plus the letter filters.
 */
export const GET = sessionRoute(async ({ actor, meta, search }) => {
  const format = exportFormat(search);
  const withPayload = search.get("payload") === "1";
  const filter = parseLetterFilter(search);
  const { count, countAtLeast, rows } = await exportLetters(actor, meta, {
    filter,
    format,
    includePayload: withPayload,
  });
  // Masked here, before a byte leaves the server: the index holds headers and payloads unmasked.
  const policy = await maskingPolicy(actor.role, filter.connectionId, filter.queue);
  return exportResponse({
    rows,
    format,
    map: (r) => maskExportedLetter(r, policy),
    toCsv: (batch, header) => lettersToCsv(batch, { header, withPayload }),
    filenamePrefix: "triage",
    // A set larger than the count's cap says only how many it holds at least.
    headers: countAtLeast ? { "X-Total-Count-At-Least": String(count) } : { "X-Total-Count": String(count) },
  });
});
