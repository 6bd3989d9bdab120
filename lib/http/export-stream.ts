import { AppError, loggableError } from "@/lib/errors";

export type ExportFormat = "csv" | "json";

/** `?format=csv|json` of an export request (default csv); anything else is a clear 400. */
export function exportFormat(params: URLSearchParams): ExportFormat {
  const format = params.get("format") ?? "csv";
  if (format !== "csv" && format !== "json")
    throw new AppError("bad_request:format", { userMessage: 'format must be "csv" or "json".' });
  return format;
}

export interface ExportStreamOptions<T> {
  rows: AsyncIterable<T>;
  format: ExportFormat;
  /** CSV text for a batch of rows; `header` is true for the first batch only (also when it is empty). */
  toCsv: (batch: T[], header: boolean) => string;
  /** Applied to every row before it is written (e.g. masking). */
  map?: (row: T) => T;
  filenamePrefix: string;
  headers?: Record<string, string>;
  /** Rows per chunk: the response flows without holding the export in memory. */
  batchSize?: number;
  /** Rows of the first chunk (default 50, at most batchSize): the first bytes wait for these only. */
  firstBatchSize?: number;
}

/**
 * Builds the chunks of an export: CSV with its header line once, or one JSON array, batch by batch
 * as the consumer pulls. Separate from the Response so it can be tested on its own.
 */
export function exportChunks<T>(
  o: Omit<ExportStreamOptions<T>, "filenamePrefix" | "headers">,
): ReadableStream<Uint8Array> {
  const size = o.batchSize ?? 200;
  const firstSize = Math.min(o.firstBatchSize ?? 50, size);
  const iterator = o.rows[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let first = true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const batch: T[] = [];
        let done = false;
        while (batch.length < (first ? firstSize : size)) {
          const next = await iterator.next();
          if (next.done) {
            done = true;
            break;
          }
          batch.push(o.map ? o.map(next.value) : next.value);
        }
        let text = "";
        if (o.format === "csv") {
          if (batch.length || first) text = o.toCsv(batch, first);
        } else {
          text = batch.map((r, i) => (first && i === 0 ? "[\n" : ",\n") + JSON.stringify(r)).join("");
          if (done) text += first && batch.length === 0 ? "[]\n" : "\n]\n";
        }
        first = false;
        if (text) controller.enqueue(encoder.encode(text));
        if (done) controller.close();
      } catch (e) {
        // Never the message: it can quote row content.
        console.error("export failed mid-stream:", loggableError(e));
        controller.error(e);
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/** A streamed download of an export, bounded in memory whatever its size. */
export function exportResponse<T>(o: ExportStreamOptions<T>): Response {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  return new Response(exportChunks(o), {
    headers: {
      "Content-Type": o.format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="${o.filenamePrefix}-${stamp}.${o.format}"`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-store",
      ...o.headers,
    },
  });
}
