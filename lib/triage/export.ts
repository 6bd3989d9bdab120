import { csvCell } from "@/lib/audit/csv";
import { visibleFingerprint, visibleSha256 } from "@/lib/masking/digest";
import { maskHeaderRecord, maskPayloadWithRules, maskTextWithRules } from "@/lib/masking/engine";
import type { MaskingRule } from "@/lib/masking/types";
import type { ExportedLetter } from "./queries";

/** Columns of a CSV export, in order; times are absolute UTC. Headers as one JSON cell. */
export const LETTER_CSV_COLUMNS = [
  "letterId",
  "messageId",
  "arrivedAt",
  "deadLetteredAt",
  "firstSeenAt",
  "lastSeenAt",
  "goneAt",
  "reason",
  "originQueue",
  "exceptionClass",
  "exceptionMessage",
  "groupKey",
  "groupLabel",
  "disposition",
  "ruleId",
  "receiveCount",
  "position",
  "kafkaPartition",
  "kafkaOffset",
  "bodySize",
  "sha256",
  "fingerprint",
  "payloadTruncated",
  "handledOutcome",
  "headers",
] as const;

export function lettersToCsv(
  rows: Iterable<ExportedLetter>,
  opts: { header?: boolean; withPayload?: boolean } = {},
): string {
  const cols: string[] = [...LETTER_CSV_COLUMNS, ...(opts.withPayload ? ["payloadText", "payloadBase64"] : [])];
  const lines: string[] = [];
  if (opts.header) lines.push(cols.join(","));
  for (const r of rows) {
    const rec = r as unknown as Record<string, unknown>;
    lines.push(cols.map((c) => csvCell(c === "headers" ? JSON.stringify(r.headers) : rec[c])).join(","));
  }
  return lines.length ? `${lines.join("\r\n")}\r\n` : "";
}

/**
 * A letter as the exporting role may see it: headers and exception text through the masking
 * rules; a payload masked to text (payloadBase64 dropped) unless no rule applies to the role; the
 * SHA-256 and fingerprint keyed unless the role sees the bytes (lib/masking/digest.ts).
 */
export function maskExportedLetter(
  r: ExportedLetter,
  policy: { rules: MaskingRule[]; hashKey: Uint8Array | string; payload: "none" | "masked" },
): ExportedLetter {
  const digests = { sha256: visibleSha256(r.sha256, policy), fingerprint: visibleFingerprint(r.fingerprint, policy) };
  if (policy.rules.length === 0) return { ...r, ...digests };
  const text = (t: string | null) => (t ? maskTextWithRules(t, policy.rules, policy.hashKey).text : t);
  const out: ExportedLetter = {
    ...r,
    ...digests,
    exceptionMessage: text(r.exceptionMessage),
    groupLabel: text(r.groupLabel) ?? "",
    headers: maskHeaderRecord(r.headers, policy.rules, policy.hashKey).headers,
  };
  if (r.payloadBase64 !== undefined || r.payloadText !== undefined) {
    const bytes = r.payloadBase64 ? Buffer.from(r.payloadBase64, "base64") : null;
    const m = bytes
      ? maskPayloadWithRules(bytes, null, policy.rules, policy.hashKey, {
          truncated: r.payloadTruncated,
          maxChars: 4 * 1024 * 1024,
        })
      : null;
    out.payloadBase64 = null;
    out.payloadText = m ? m.text : null;
  }
  return out;
}
