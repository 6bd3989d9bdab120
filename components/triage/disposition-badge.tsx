const WORDS = { transient: "transient-looking", permanent: "permanent-looking", unknown: "unknown" } as const;
const TONE = { transient: "badge-info", permanent: "badge-danger", unknown: "" } as const;

/** Transient-looking / permanent-looking / unknown, with the rule that matched on hover. */
export function DispositionBadge({
  disposition,
  ruleId,
  ruleText,
}: {
  disposition: string;
  ruleId: string | null;
  ruleText?: string;
}) {
  const d = (disposition in WORDS ? disposition : "unknown") as keyof typeof WORDS;
  const title = ruleId ? `Rule ${ruleId}${ruleText ? `: ${ruleText}` : ""}` : "No classification rule matched";
  return (
    <span className={`badge ${TONE[d]}`} title={title} data-testid="disposition" data-disposition={d}>
      {WORDS[d]}
    </span>
  );
}
