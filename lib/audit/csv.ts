import type { AuditRow } from "./types";

export const AUDIT_CSV_COLUMNS = [
  "id",
  "at",
  "operationId",
  "scope",
  "actorEmail",
  "actorRole",
  "actorId",
  "action",
  "outcome",
  "connectionId",
  "queue",
  "target",
  "requestId",
  "ip",
  "details",
  "prevHash",
  "hash",
  "keyId",
] as const satisfies readonly (keyof AuditRow)[];

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell (RFC 4180). A cell a spreadsheet would run as a formula (= + - @ tab CR first) is
 * prefixed with a single quote: audit values come from operators and message headers.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * CSV lines (CRLF-terminated) for rows; with `header` (default true) the column line comes first.
 * Call it per batch with `header: false` after the first to stream an export.
 */
export function auditRowsToCsv(rows: Iterable<AuditRow>, opts: { header?: boolean } = {}): string {
  const lines: string[] = [];
  if (opts.header ?? true) lines.push(AUDIT_CSV_COLUMNS.join(","));
  for (const row of rows) lines.push(AUDIT_CSV_COLUMNS.map((c) => csvCell(row[c])).join(","));
  return lines.length ? `${lines.join("\r\n")}\r\n` : "";
}
