import Link from "@/components/ui/link";
import { formatCount } from "@/lib/format";
import { failuresHref } from "@/lib/issues/ui-links";

/** "2 new · 1 regressed": a DLQ's failure groups that need someone, leading to them on the failures page. */
export function AttentionLink({
  connectionId,
  queue,
  counts,
}: {
  connectionId: string;
  queue: string;
  counts: { new: number; regressed: number } | undefined;
}) {
  if (!counts || counts.new + counts.regressed === 0) return null;
  const parts = [
    counts.new ? `${formatCount(counts.new)} new` : null,
    counts.regressed ? `${formatCount(counts.regressed)} regressed` : null,
  ].filter(Boolean);
  return (
    <Link
      href={failuresHref({ tab: "attention", connection: connectionId, dlq: queue })}
      className={`badge ${counts.regressed ? "badge-danger" : "badge-warn"}`}
      data-testid="dlq-attention"
      data-new={counts.new}
      data-regressed={counts.regressed}
      title="Failure groups of this DLQ nobody has acknowledged yet (new), or that came back after they were resolved (regressed)"
    >
      {parts.join(" · ")}
    </Link>
  );
}
