import { csvCell } from "@/lib/audit/csv";
import type { ExportedLetter } from "./queries";

/** Columns of a CSV export, in order; times are absolute UTC. Headers as one JSON cell. */
export const LETTER_CSV_COLUMNS = [
  "letterId", "messageId", "arrivedAt", "deadLetteredAt", "firstSeenAt", "lastSeenAt", "goneAt", "reason", "originQueue",
  "exceptionClass", "exceptionMessage", "groupKey", "groupLabel", "disposition", "ruleId", "receiveCount", "position",
  "kafkaPartition", "kafkaOffset", "bodySize", "sha256", "fingerprint", "payloadTruncated", "handledOutcome", "headers",
] as const;

export function lettersToCsv(rows: Iterable<ExportedLetter>, opts: { header?: boolean; withPayload?: boolean } = {}): string {
  const cols: string[] = [...LETTER_CSV_COLUMNS, ...(opts.withPayload ? ["payloadText", "payloadBase64"] : [])];
  const lines: string[] = [];
  if (opts.header) lines.push(cols.join(","));
  for (const r of rows) {
    const rec = r as unknown as Record<string, unknown>;
    lines.push(cols.map((c) => csvCell(c === "headers" ? JSON.stringify(r.headers) : rec[c])).join(","));
  }
  return lines.length ? `${lines.join("\r\n")}\r\n` : "";
}
