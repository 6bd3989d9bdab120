import { auditRowsToCsv } from "@/lib/audit";
import { requireActor, requestMeta } from "@/lib/auth/session";
import { exportAudit, parseAuditFilter } from "@/lib/dlq/audit-log";
import { errorResponse } from "@/lib/dlq/http";
import { AppError } from "@/lib/errors";

export const dynamic = "force-dynamic";

/** Streams matching audit rows as CSV or a JSON array, batch by batch: memory stays bounded. */
export async function GET(req: Request) {
  try {
    const actor = await requireActor();
    const params = new URL(req.url).searchParams;
    const format = params.get("format") ?? "csv";
    if (format !== "csv" && format !== "json") {
      throw new AppError("bad_request:format", { userMessage: 'format must be "csv" or "json".' });
    }
    const filter = parseAuditFilter(params);
    const rows = await exportAudit(actor, await requestMeta(), { filter, format });
    const encoder = new TextEncoder();
    const iterator = rows[Symbol.asyncIterator]();
    let first = true;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const batch: string[] = [];
          // Pull up to 200 rows per chunk so the response flows without holding the export.
          for (let i = 0; i < 200; i++) {
            const next = await iterator.next();
            if (next.done) {
              if (format === "csv") {
                if (first) batch.push(auditRowsToCsv([], { header: true }));
              } else {
                batch.push(first ? "[]\n" : "\n]\n");
              }
              if (batch.length) controller.enqueue(encoder.encode(batch.join("")));
              controller.close();
              return;
            }
            if (format === "csv") {
              batch.push(auditRowsToCsv([next.value], { header: first }));
            } else {
              batch.push((first ? "[\n" : ",\n") + JSON.stringify(next.value));
            }
            first = false;
          }
          controller.enqueue(encoder.encode(batch.join("")));
        } catch (e) {
          console.error("audit export failed mid-stream", e);
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
        "Content-Disposition": `attachment; filename="audit-${stamp}.${format}"`,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
      },
    });
  } catch (e) {
    return errorResponse(e);
  }
}
