import "server-only";
import type { DeathRecord, FailureInfo, HeaderEntry } from "@/lib/brokers/types";
import { maskHeadersWithRules, maskPayloadWithRules, maskTextWithRules } from "@/lib/masking/engine";
import type { MaskingPolicy } from "@/lib/masking/policy";
import { buildPayloadView, type PayloadView } from "./payload-view";

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

/** The payload view for the policy's role: masked on the server, or the plain view when no rule applies. */
export function maskedPayloadView(
  body: Uint8Array,
  opts: { truncated: boolean; contentType: string | null },
  policy: MaskingPolicy,
): { view: PayloadView; maskedCount: number; masked: boolean } {
  const m = maskPayloadWithRules(body, opts.contentType, policy.rules, policy.hashKey, { truncated: opts.truncated });
  if (m.kind === "original") return { view: buildPayloadView(body, opts), maskedCount: 0, masked: false };
  const note =
    m.kind === "hidden"
      ? "Masking rules apply to your role and this payload cannot be masked safely, so it is hidden."
      : m.truncated
        ? "Masked view of the first part of the payload."
        : null;
  return {
    view: { kind: m.kind === "json" ? "json" : "text", text: m.text ?? "", note },
    maskedCount: m.maskedCount,
    masked: true,
  };
}

/** Exception message and stack trace through the detectors and key=value rules (the DLQ page's list). */
export function maskFailure(f: FailureInfo, policy: MaskingPolicy): FailureInfo {
  if (policy.rules.length === 0) return f;
  const text = (t: string | null) => (t ? maskTextWithRules(t, policy.rules, policy.hashKey).text : t);
  return { ...f, exceptionMessage: text(f.exceptionMessage), stackTrace: text(f.stackTrace) };
}
