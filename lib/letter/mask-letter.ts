import "server-only";
import type { DeathRecord, FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { maskHeadersWithRules, maskPayloadWithRules, maskTextWithRules } from "@/lib/masking/engine";
import type { MaskingPolicy } from "@/lib/masking/policy";
import { maskBinary } from "@/lib/masking/binary";
import { decodeUtf8, looksLikeText } from "@/lib/text";
import { buildPayloadView, hexView, type PayloadView } from "./payload-view";

/** Bytes of a binary payload shown (and masked) as hex on a page; the rest is downloadable. */
export const HEX_VIEW_BYTES = 64 * 1024;

/** Headers, properties, failure text and history as the policy's role may see them. */
export function maskLetterMeta(
  l: { headers: HeaderEntry[]; properties: HeaderEntry[]; failure: FailureInfo; history: DeathRecord[] },
  policy: MaskingPolicy,
): {
  headers: HeaderEntry[];
  properties: HeaderEntry[];
  failure: FailureInfo;
  history: DeathRecord[];
  maskedCount: number;
} {
  if (policy.rules.length === 0) return { ...l, maskedCount: 0 };
  const { rules, hashKey } = policy;
  let maskedCount = 0;
  const entries = (e: HeaderEntry[]) => {
    const r = maskHeadersWithRules(e, rules, hashKey);
    maskedCount += r.maskedCount;
    return r.entries;
  };
  const text = (t: string | null) => {
    if (!t) return t;
    const r = maskTextWithRules(t, rules, hashKey);
    maskedCount += r.maskedCount;
    return r.text;
  };
  const failure = {
    ...l.failure,
    exceptionMessage: text(l.failure.exceptionMessage),
    stackTrace: text(l.failure.stackTrace),
  };
  const history = l.history.map((h) => ({ ...h, extra: entries(h.extra) }));
  return { headers: entries(l.headers), properties: entries(l.properties), failure, history, maskedCount };
}

function isBinary(body: Uint8Array, truncated: boolean): boolean {
  const text = decodeUtf8(body, truncated);
  return text === null || !looksLikeText(text);
}

/**
 * The payload view for the policy's role: masked on the server, or the plain view when no rule
 * applies. A binary payload under rules is masked byte-wise (lib/masking/binary.ts) on the bytes
 * the hex view shows only, so its cost is bounded whatever the payload's size.
 */
export function maskedPayloadView(
  body: Uint8Array,
  opts: { truncated: boolean; contentType: string | null; contentEncoding?: string | null },
  policy: MaskingPolicy,
): { view: PayloadView; maskedCount: number; masked: boolean } {
  if (policy.rules.length > 0 && isBinary(body, opts.truncated)) {
    const shown = body.subarray(0, Math.min(body.length, HEX_VIEW_BYTES));
    const b = maskBinary(shown, policy.rules, policy.hashKey, { contentEncoding: opts.contentEncoding });
    if (b.kind === "hidden")
      return { view: { kind: "hidden", text: b.reason, note: null }, maskedCount: 1, masked: true };
    const note = opts.truncated ? "Only the first part of the payload was read." : null;
    return {
      view: hexView(b.bytes, { maxHexBytes: HEX_VIEW_BYTES, note, masked: b.ranges }),
      maskedCount: b.maskedCount,
      masked: b.maskedCount > 0,
    };
  }
  const m = maskPayloadWithRules(body, opts.contentType, policy.rules, policy.hashKey, { truncated: opts.truncated });
  if (m.kind === "original")
    return { view: buildPayloadView(body, { ...opts, maxHexBytes: HEX_VIEW_BYTES }), maskedCount: 0, masked: false };
  if (m.kind === "hidden")
    return {
      view: {
        kind: "hidden",
        text: `Masking rules apply to your role and this payload cannot be masked safely, so it is hidden (${m.text}).`,
        note: null,
      },
      maskedCount: m.maskedCount,
      masked: true,
    };
  const note = m.truncated ? "Masked view of the first part of the payload." : null;
  return {
    view: { kind: m.kind === "json" ? "json" : "text", text: m.text ?? "", note },
    maskedCount: m.maskedCount,
    masked: true,
  };
}

/** How many values each rule masked in a letter: "what and why" for the masked badge. */
export interface MaskedByRule {
  id: string;
  description: string;
  payload: number;
  /** Headers, properties, exception message, stack trace, death history. */
  other: number;
}

/**
 * Each rule of the policy run alone over the letter (only called when something was masked, so a
 * letter without masked values costs nothing more); a value two rules cover counts for both.
 */
export function maskedByRule(
  l: { headers: HeaderEntry[]; properties: HeaderEntry[]; failure: FailureInfo; history: DeathRecord[] },
  body: Uint8Array | null,
  opts: { truncated: boolean; contentType: string | null; contentEncoding?: string | null },
  policy: MaskingPolicy,
): MaskedByRule[] {
  const out: MaskedByRule[] = [];
  for (const rule of policy.rules) {
    const one = { ...policy, rules: [rule] };
    const other = maskLetterMeta(l, one).maskedCount;
    const payload = body ? maskedPayloadView(body, opts, one).maskedCount : 0;
    if (other + payload > 0) out.push({ id: rule.id, description: rule.description, payload, other });
  }
  return out;
}

/** Exception message and stack trace through the detectors and key=value rules (the DLQ page's list). */
export function maskFailure(f: FailureInfo, policy: MaskingPolicy): FailureInfo {
  if (policy.rules.length === 0) return f;
  const text = (t: string | null) => (t ? maskTextWithRules(t, policy.rules, policy.hashKey).text : t);
  return { ...f, exceptionMessage: text(f.exceptionMessage), stackTrace: text(f.stackTrace) };
}

/** What masking did to a letter's view: values replaced in payload and headers, and whether the DLQ is sensitive. */
export interface LetterMaskingSummary {
  payloadMasked: boolean;
  maskedCount: number;
  sensitive: boolean;
  /** Values masked in the payload view alone. */
  payloadMaskedCount: number;
  /** Which rules masked what (empty when nothing was masked). */
  byRule: MaskedByRule[];
}
