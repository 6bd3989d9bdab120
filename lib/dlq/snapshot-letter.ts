import "server-only";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { maskHeadersWithRules, maskTextWithRules } from "@/lib/masking/engine";
import type { MaskingPolicy } from "@/lib/masking/policy";
import { streamLetters, type ExportedLetter, type IndexedLetter } from "@/lib/triage/queries";
import { maskedPayloadView, type LetterMaskingSummary, type MaskedByRule } from "@/lib/letter/mask-letter";
import type { PayloadView } from "@/lib/letter/payload-view";
import { visibleFingerprint, visibleSha256 } from "@/lib/masking/digest";

/**
 * A letter of a DLQ whose reads cost letters, as the snapshot holds it (the triage index of its
 * latest read): metadata, headers as text, and the payload as far as the index keeps it. Serving
 * it reads nothing from the broker.
 */
export interface SnapshotLetter {
  letter: Omit<IndexedLetter, "headers">;
  headers: HeaderEntry[];
  payload: PayloadView | null;
  masking: LetterMaskingSummary;
}

/**
 * The letter from the snapshot, masked for the policy's role; null when the snapshot does not hold
 * it. The caller authorized and audits the view (viewLetter).
 */
export async function snapshotLetter(
  input: { connectionId: string; queue: string; letterId: string },
  policy: MaskingPolicy,
  showPayload: boolean,
): Promise<SnapshotLetter | null> {
  let found: ExportedLetter | null = null;
  for await (const r of streamLetters(
    { connectionId: input.connectionId, queue: input.queue, letterId: input.letterId, includeGone: true },
    { withPayload: showPayload, batchSize: 2 },
  ))
    found = r;
  if (!found) return null;
  const view = maskSnapshot(found, policy, showPayload);
  const total = view.metaCount + (view.shown?.maskedCount ?? 0);
  // Counted once per rule, as the letter page counts them: only when something was masked.
  const byRule: MaskedByRule[] = [];
  if (total > 0)
    for (const rule of policy.rules) {
      const one = maskSnapshot(found, { ...policy, rules: [rule] }, showPayload);
      const payload = one.shown?.maskedCount ?? 0;
      if (one.metaCount + payload > 0)
        byRule.push({ id: rule.id, description: rule.description, payload, other: one.metaCount });
    }
  return {
    letter: view.letter,
    headers: view.headers,
    payload: view.shown?.view ?? null,
    masking: {
      payloadMasked: view.shown?.masked ?? false,
      maskedCount: total,
      sensitive: policy.sensitive,
      payloadMaskedCount: view.shown?.maskedCount ?? 0,
      byRule,
    },
  };
}

/** The snapshot's letter through the policy's rules, and how many values they masked outside the payload. */
function maskSnapshot(found: ExportedLetter, policy: MaskingPolicy, showPayload: boolean) {
  const { headers: raw, payloadBase64, payloadText: _text, ...letter } = found;
  let metaCount = 0;
  const heads = maskHeadersWithRules(
    Object.entries(raw).map(([name, v]) => ({ name, value: { t: "string" as const, v } })),
    policy.rules,
    policy.hashKey,
  );
  metaCount += heads.maskedCount;
  const text = (t: string | null) => {
    if (!t || policy.rules.length === 0) return t;
    const m = maskTextWithRules(t, policy.rules, policy.hashKey);
    metaCount += m.maskedCount;
    return m.text;
  };
  const shown =
    showPayload && payloadBase64
      ? maskedPayloadView(
          Buffer.from(payloadBase64, "base64"),
          { truncated: letter.payloadTruncated, contentType: null },
          policy,
        )
      : null;
  const masked = {
    ...letter,
    sha256: visibleSha256(letter.sha256, policy),
    fingerprint: visibleFingerprint(letter.fingerprint, policy),
    exceptionMessage: text(letter.exceptionMessage),
    groupLabel: text(letter.groupLabel) ?? letter.groupLabel,
  };
  return { letter: masked, headers: heads.entries, shown, metaCount };
}
