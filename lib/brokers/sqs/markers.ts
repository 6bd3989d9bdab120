/**
 * Redrive markers as SQS message attributes. Pure (no client): used by the mover to write them and
 * by the letter decoder to read them back.
 *
 * SQS allows at most 10 message attributes per message. The four markers are written as four
 * attributes (x-dlq-redrive-id, x-dlq-replay-id, x-dlq-redrive-count as Number,
 * x-dlq-original-message-id) when the letter's own attributes leave room for them (at most 6).
 * When the letter already carries 7 to 9 attributes of its own, all four go into ONE attribute,
 * `x-dlq-redrive`, holding compact JSON:
 *   {"redriveId":"…","replayId":"…","redriveCount":2,"originalMessageId":"…"}
 * Markers from an earlier redrive (either form) are replaced, never added to, so a letter does not
 * gain attributes with every cycle. A letter with 10 attributes of its own has no room even for the
 * combined marker: it is not moved (a copy without markers would escape the redrive-count limit
 * and could not be told apart from the original); the reason says so.
 * The reader (`expandCombinedMarker`) shows a combined marker as the four usual headers, so
 * everything above the adapter reads x-dlq-redrive-count the same way in both forms.
 *
 * A repaired copy carries a fifth marker, x-dlq-repaired-by-operation. It belongs to the
 * same budget: five separate attributes when the letter's own leave room for them (at most 5), else
 * `"repairedByOperation":"…"` inside the combined attribute. It is provenance, not a per-cycle
 * counter: a later plain redrive of a repaired letter keeps it (in whichever form the markers then
 * take), and only a new repair replaces it.
 */
import type { MessageAttributeValue } from "@aws-sdk/client-sqs";
import { REDRIVE_HEADERS, REPAIR_HEADER, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";

export const SQS_MAX_MESSAGE_ATTRIBUTES = 10;
export const COMBINED_MARKER = "x-dlq-redrive";
const MARKER_NAMES = new Set<string>([...Object.values(REDRIVE_HEADERS), REPAIR_HEADER, COMBINED_MARKER]);

/** The markers on a letter: the four redrive markers plus, on a repaired letter, its repair operation. */
export type SqsMarkers = RedriveMarkers & { repairedByOperation?: string | null };

export const isMarkerAttribute = (name: string) => MARKER_NAMES.has(name);

/** Only the fields SendMessage accepts (received values also carry empty list fields). */
function cleanValue(v: MessageAttributeValue): MessageAttributeValue {
  const out: MessageAttributeValue = { DataType: v.DataType };
  if (v.StringValue !== undefined) out.StringValue = v.StringValue;
  if (v.BinaryValue !== undefined) out.BinaryValue = v.BinaryValue;
  return out;
}

/** Markers already on a letter, from either form (separate attributes win over the combined one). */
export function readMarkers(attrs: Record<string, MessageAttributeValue> | undefined): Partial<SqsMarkers> {
  const a = attrs ?? {};
  const out: Partial<SqsMarkers> = {};
  const combined = a[COMBINED_MARKER]?.StringValue;
  if (combined) {
    try {
      const j = JSON.parse(combined) as Record<string, unknown>;
      if (typeof j.redriveId === "string") out.redriveId = j.redriveId;
      if (typeof j.replayId === "string") out.replayId = j.replayId;
      if (typeof j.redriveCount === "number" && Number.isFinite(j.redriveCount)) out.redriveCount = j.redriveCount;
      if (typeof j.originalMessageId === "string") out.originalMessageId = j.originalMessageId;
      if (typeof j.repairedByOperation === "string") out.repairedByOperation = j.repairedByOperation;
    } catch {
      // Not ours or damaged: ignored (it is still shown as the attribute it is).
    }
  }
  const s = (n: string) => a[n]?.StringValue;
  if (s(REDRIVE_HEADERS.redriveId) !== undefined) out.redriveId = s(REDRIVE_HEADERS.redriveId);
  if (s(REDRIVE_HEADERS.replayId) !== undefined) out.replayId = s(REDRIVE_HEADERS.replayId);
  const c = s(REDRIVE_HEADERS.redriveCount);
  if (c !== undefined && /^\d+$/.test(c)) out.redriveCount = Number(c);
  if (s(REDRIVE_HEADERS.originalMessageId) !== undefined) out.originalMessageId = s(REDRIVE_HEADERS.originalMessageId);
  if (s(REPAIR_HEADER) !== undefined) out.repairedByOperation = s(REPAIR_HEADER);
  return out;
}

export type MarkedAttributes =
  | { attributes: Record<string, MessageAttributeValue>; form: "separate" | "combined" }
  | { error: string };

/**
 * The letter's own attributes (old markers dropped) plus the new markers, within SQS's limit of 10.
 * `m.repairedByOperation`: the repair marker to write; absent, the one the letter carries is kept.
 */
export function withMarkers(attrs: Record<string, MessageAttributeValue> | undefined, m: SqsMarkers): MarkedAttributes {
  const own: Record<string, MessageAttributeValue> = {};
  for (const [k, v] of Object.entries(attrs ?? {})) if (!isMarkerAttribute(k)) own[k] = cleanValue(v);
  const n = Object.keys(own).length;
  const original = m.originalMessageId;
  const repaired =
    m.repairedByOperation === undefined ? (readMarkers(attrs).repairedByOperation ?? null) : m.repairedByOperation;
  const markerCount = repaired ? 5 : 4;
  if (n + markerCount <= SQS_MAX_MESSAGE_ATTRIBUTES) {
    const out = { ...own };
    out[REDRIVE_HEADERS.redriveId] = { DataType: "String", StringValue: m.redriveId };
    out[REDRIVE_HEADERS.replayId] = { DataType: "String", StringValue: m.replayId };
    out[REDRIVE_HEADERS.redriveCount] = { DataType: "Number", StringValue: String(m.redriveCount) };
    if (original) out[REDRIVE_HEADERS.originalMessageId] = { DataType: "String", StringValue: original };
    if (repaired) out[REPAIR_HEADER] = { DataType: "String", StringValue: repaired };
    return { attributes: out, form: "separate" };
  }
  if (n + 1 <= SQS_MAX_MESSAGE_ATTRIBUTES) {
    const json = JSON.stringify({
      redriveId: m.redriveId,
      replayId: m.replayId,
      redriveCount: m.redriveCount,
      ...(original ? { originalMessageId: original } : {}),
      ...(repaired ? { repairedByOperation: repaired } : {}),
    });
    return { attributes: { ...own, [COMBINED_MARKER]: { DataType: "String", StringValue: json } }, form: "combined" };
  }
  return {
    error: `This letter already carries ${n} message attributes of its own, the SQS maximum of ${SQS_MAX_MESSAGE_ATTRIBUTES}, so the console cannot add its redrive markers (not even the single combined "${COMBINED_MARKER}" attribute). It was not moved: a copy without markers would escape the redrive-count limit and could not be told apart from the original. It stays in the DLQ.`,
  };
}

/** Headers as read, plus the marker headers spelled out from a combined `x-dlq-redrive` attribute. */
export function expandCombinedMarker(
  headers: HeaderEntry[],
  attrs: Record<string, MessageAttributeValue> | undefined,
): HeaderEntry[] {
  if (!attrs?.[COMBINED_MARKER]) return headers;
  const m = readMarkers({ [COMBINED_MARKER]: attrs[COMBINED_MARKER] });
  const has = (n: string) => headers.some((h) => h.name === n);
  const extra: HeaderEntry[] = [];
  if (m.redriveId !== undefined && !has(REDRIVE_HEADERS.redriveId))
    extra.push({ name: REDRIVE_HEADERS.redriveId, value: { t: "string", v: m.redriveId } });
  if (m.replayId !== undefined && !has(REDRIVE_HEADERS.replayId))
    extra.push({ name: REDRIVE_HEADERS.replayId, value: { t: "string", v: m.replayId } });
  if (m.redriveCount !== undefined && !has(REDRIVE_HEADERS.redriveCount))
    extra.push({ name: REDRIVE_HEADERS.redriveCount, value: { t: "number", v: String(m.redriveCount) } });
  if (m.originalMessageId && !has(REDRIVE_HEADERS.originalMessageId))
    extra.push({ name: REDRIVE_HEADERS.originalMessageId, value: { t: "string", v: m.originalMessageId } });
  if (m.repairedByOperation && !has(REPAIR_HEADER))
    extra.push({ name: REPAIR_HEADER, value: { t: "string", v: m.repairedByOperation } });
  return extra.length
    ? [...headers, ...extra].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    : headers;
}
