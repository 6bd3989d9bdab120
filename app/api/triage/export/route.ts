import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse, loggableError } from "@/lib/dlq/http";
import { AppError } from "@/lib/errors";
import { maskingPolicy } from "@/lib/masking/policy";
import { lettersToCsv, maskExportedLetter } from "@/lib/triage/export";
import { parseLetterFilter } from "@/lib/triage/http";
import { exportLetters } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/**
 * The filtered set as CSV or a JSON array, streamed in keyset batches (bounded memory).
 * ?format=csv|json&payload=1 (payloads need letter:read-payload) plus the letter filters.
 */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const format = p.get("format") ?? "csv";
    if (format !== "csv" && format !== "json") throw new AppError("bad_request:format", { userMessage: 'format must be "csv" or "json".' });
    const withPayload = p.get("payload") === "1";
    const actor = await requireActor();
    const filter = parseLetterFilter(p);
    const { count, rows } = await exportLetters(actor, await requestMeta(), { filter, format, includePayload: withPayload });
    // Masked here, before a byte leaves the server: the index holds headers and payloads unmasked.
    const policy = await maskingPolicy(actor.role, filter.connectionId, filter.queue);
    const iterator = rows[Symbol.asyncIterator]();
    const encoder = new TextEncoder();
    let first = true;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const batch = [];
          for (let i = 0; i < 200; i++) {
            const next = await iterator.next();
            if (next.done) break;
            batch.push(maskExportedLetter(next.value, policy));
          }
          let text = "";
          if (format === "csv") text = lettersToCsv(batch, { header: first, withPayload });
          else text = batch.map((r, i) => (first && i === 0 ? "[\n" : ",\n") + JSON.stringify(r)).join("");
          const done = batch.length < 200;
          if (done) text += format === "json" ? (first && batch.length === 0 ? "[]\n" : "\n]\n") : "";
          first = false;
          if (text) controller.enqueue(encoder.encode(text));
          if (done) controller.close();
        } catch (e) {
          console.error("triage export failed mid-stream:", loggableError(e));
          controller.error(e);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return new Response(stream, {
      headers: {
        "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
        "Content-Disposition": `attachment; filename="triage-${stamp}.${format}"`,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
        "X-Total-Count": String(count),
      },
    });
  } catch (e) {
    return errorResponse(e);
  }
}
