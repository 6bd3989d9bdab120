import { csvCell } from "@/lib/audit/csv";
import type { ExportedArchived } from "./use-cases";

/** Columns of an archive CSV export, in order; times are absolute UTC; headers as one JSON cell. */
export const ARCHIVE_CSV_COLUMNS = [
  "id",
  "connectionId",
  "queue",
  "letterId",
  "messageId",
  "discardJobId",
  "discardedAt",
  "discardedBy",
  "discardReason",
  "sha256",
  "bodySize",
  "contentType",
  "exceptionClass",
  "failureReason",
  "originQueue",
  "deadLetteredAt",
  "expiresAt",
  "restoreState",
  "restoredAt",
  "restoredBy",
  "restoreReason",
  "headers",
] as const;

export function archiveRowsToCsv(
  rows: Iterable<ExportedArchived>,
  opts: { header?: boolean; withPayload?: boolean } = {},
): string {
  const cols: string[] = [...ARCHIVE_CSV_COLUMNS, ...(opts.withPayload ? ["payloadText", "payloadBase64"] : [])];
  const lines: string[] = [];
  if (opts.header) lines.push(cols.join(","));
  for (const r of rows) {
    const rec = r as unknown as Record<string, unknown>;
    lines.push(
      cols
        .map((c) =>
          csvCell(
            c === "headers" ? JSON.stringify(Object.fromEntries(r.headers.map((h) => [h.name, h.value]))) : rec[c],
          ),
        )
        .join(","),
    );
  }
  return lines.length ? `${lines.join("\r\n")}\r\n` : "";
}
