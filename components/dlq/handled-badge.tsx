import { RelativeTime } from "@/components/ui/relative-time";
import type { Letter } from "@/lib/brokers/contract/letter";
import { formatUtc } from "@/lib/format";

/** The console already handled this letter; the broker still keeps it (no per-letter removal). */
export function HandledBadge({ handled }: { handled: Letter["handled"] | null | undefined }) {
  if (!handled) return null;
  return (
    <span
      className="badge badge-ok"
      data-testid="handled-badge"
      title={`Handled by the console: ${handled.outcome} at ${formatUtc(handled.at)}`}
    >
      handled · {handled.outcome} <RelativeTime value={handled.at} />
    </span>
  );
}
