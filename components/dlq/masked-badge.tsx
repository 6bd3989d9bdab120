import type { MaskedByRule } from "@/lib/letter/mask-letter";

/** "3 values masked in the payload by rule cards", with each rule's description in the tooltip. */
export function maskedSentence(total: number, rules: Array<Pick<MaskedByRule, "id">>, where: string): string {
  const by = rules.length === 0 ? "" : ` by rule${rules.length === 1 ? "" : "s"} ${rules.map((r) => r.id).join(", ")}`;
  return `${total} value${total === 1 ? "" : "s"} masked ${where}${by}`;
}

/**
 * Shown only where something was masked: what (how many values, where) and why (the rules), and for
 * a role that may not reveal, who can.
 */
export function MaskedBadge({
  total,
  rules,
  where,
  canReveal,
  testId,
}: {
  total: number;
  rules: Array<Pick<MaskedByRule, "id" | "description">>;
  where: string;
  canReveal: boolean;
  testId: string;
}) {
  if (total <= 0) return null;
  const why = rules.map((r) => `${r.id}: ${r.description || "(no description)"}`).join("\n");
  return (
    <span className="badge badge-warn" data-testid={testId} title={why || undefined}>
      {maskedSentence(total, rules, where)}
      {canReveal ? null : <span className="muted"> · ask an admin for a reveal</span>}
    </span>
  );
}

/** The headers card's badge: values masked outside the payload (headers, properties, the exception). */
export function MetaMaskedBadge({
  masking,
  canReveal,
}: {
  masking: { maskedCount: number; payloadMaskedCount: number; byRule: MaskedByRule[] };
  canReveal: boolean;
}) {
  return (
    <MaskedBadge
      total={masking.maskedCount - masking.payloadMaskedCount}
      rules={masking.byRule.filter((x) => x.other > 0)}
      where="in headers, properties or the exception"
      canReveal={canReveal}
      testId="meta-masked"
    />
  );
}
