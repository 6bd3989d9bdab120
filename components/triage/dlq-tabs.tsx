import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import type { Actor } from "@/lib/auth/session";
import { requestMeta } from "@/lib/auth/session";
import { discardsHref } from "@/lib/discard/ui-links";
import { dlqHref } from "@/lib/dlq/links";
import { formatCount } from "@/lib/format";
import { redrivesHref } from "@/lib/redrive/ui-links";
import { isActiveScan, progressFraction } from "@/lib/triage/scan-progress";
import { listScans, type ScanView } from "@/lib/triage/use-cases";
import { triageBase } from "@/lib/triage/view-params";
import { healthHref } from "@/lib/operations/ui-links";

/** Letters | Triage | Redrives | Discards tabs of a DLQ, with the triage index's state (running scan, or its age). */
export async function DlqTabs({
  actor,
  connectionId,
  queue,
  current,
  scans,
}: {
  actor: Actor;
  connectionId: string;
  queue: string;
  current: "letters" | "triage" | "redrives" | "discards" | "health";
  scans?: ScanView[];
}) {
  let list = scans;
  if (!list) {
    try {
      list = await listScans(actor, await requestMeta(), { connectionId, queue });
    } catch {
      list = [];
    }
  }
  const running = list.find((s) => isActiveScan(s.state));
  const done = list.find((s) => s.state === "succeeded");
  const fraction = running ? progressFraction(running.progress) : null;
  return (
    <nav className="tabs" aria-label="DLQ views" data-testid="dlq-tabs">
      <Link
        href={dlqHref(connectionId, queue)}
        aria-current={current === "letters" ? "page" : undefined}
        data-testid="tab-letters"
      >
        Letters
      </Link>
      <Link
        href={triageBase(connectionId, queue)}
        aria-current={current === "triage" ? "page" : undefined}
        data-testid="tab-triage"
      >
        Triage
      </Link>
      <Link
        href={redrivesHref(connectionId, queue)}
        aria-current={current === "redrives" ? "page" : undefined}
        data-testid="tab-redrives"
      >
        Redrives
      </Link>
      <Link
        href={discardsHref(connectionId, queue)}
        aria-current={current === "discards" ? "page" : undefined}
        data-testid="tab-discards"
      >
        Discards
      </Link>
      <Link
        href={healthHref(connectionId, queue)}
        aria-current={current === "health" ? "page" : undefined}
        data-testid="tab-health"
      >
        Health
      </Link>
      <span className="tabs-status hint" data-testid="triage-status">
        {running ? (
          <>
            scan {running.state}
            {fraction !== null
              ? ` · ${Math.round(fraction * 100)}%`
              : ` · ${formatCount(running.progress.read ?? 0)} read`}
          </>
        ) : done ? (
          <>
            index as of <RelativeTime value={done.finishedAt} />
          </>
        ) : (
          "not scanned yet"
        )}
      </span>
    </nav>
  );
}
