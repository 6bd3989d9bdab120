import Link from "@/components/ui/link";
import type { Actor } from "@/lib/auth/session";
import { requestMeta } from "@/lib/auth/session";
import { formatCount, formatRate } from "@/lib/format";
import { loggableError } from "@/lib/errors";
import type { DlqOverviewRow } from "@/lib/operations/queries";
import { lostClass, lostIn, oldestAge } from "@/lib/operations/ui-figures";
import { healthHref } from "@/lib/operations/ui-links";
import { operationsDisplaySettings } from "@/lib/operations/ui-settings";
import { viewDlqStatus } from "@/lib/operations/use-cases";
import { SeverityBadge } from "./severity-badge";

/**
 * One line under a DLQ's header on every tab: when its oldest letter is lost, how old it is and
 * where that comes from, inflow, owner, open findings, and the way to its charts. Never fails the
 * page: without the sampler's figures it says so.
 */
export async function DlqOpsStrip({
  actor,
  connectionId,
  queue,
}: {
  actor: Actor;
  connectionId: string;
  queue: string;
}) {
  let status: DlqOverviewRow | null;
  try {
    status = await viewDlqStatus(actor, await requestMeta(), { connectionId, queue });
  } catch (e) {
    console.error("dlq head: operations figures unavailable", loggableError(e));
    return (
      <div className="ops-strip" data-testid="dlq-ops">
        <span className="muted">Operations figures are unavailable right now.</span>
      </div>
    );
  }
  const link = (
    <Link href={healthHref(connectionId, queue)} data-testid="dlq-ops-link">
      Health: charts and findings →
    </Link>
  );
  if (!status) {
    return (
      <div className="ops-strip" data-testid="dlq-ops" data-sampled="no">
        <span className="muted">Not sampled yet: the sampler has not reached this DLQ.</span>
        {link}
      </div>
    );
  }
  const now = Date.now();
  const { deadlineWarnHours } = operationsDisplaySettings();
  const lost = lostIn(status, deadlineWarnHours, now);
  const oldest = oldestAge(status, now);
  return (
    <div className="ops-strip" data-testid="dlq-ops" data-sampled="yes">
      <span title={lost.title}>
        <span className={lostClass(lost.tone)} data-testid="dlq-ops-lost" data-tone={lost.tone}>
          {lost.text}
        </span>
      </span>
      <span title={oldest.title}>
        oldest <span data-testid="dlq-ops-oldest">{oldest.text}</span>
        {status.oldestSource === "scan" ? <span className="source-note"> (as of the scan)</span> : null}
      </span>
      <span title="Letters per minute over the last hour, from the sampler">
        inflow {formatRate(status.inflowPerMin)}
      </span>
      <span data-testid="dlq-ops-owner" data-owner={status.owner?.team ?? ""}>
        {status.owner ? (
          <>
            owner <span className="strong">{status.owner.team}</span>{" "}
            <span className="owner-contact">{status.owner.contact}</span>
          </>
        ) : (
          <Link href="/owners" className="muted">
            no owner
          </Link>
        )}
      </span>
      {status.openFindings > 0 && status.worstFinding ? (
        <Link
          href={healthHref(connectionId, queue)}
          data-testid="dlq-ops-findings"
          title="Open configuration findings of this DLQ"
        >
          <SeverityBadge severity={status.worstFinding}>
            {formatCount(status.openFindings)} finding{status.openFindings === 1 ? "" : "s"}
          </SeverityBadge>
        </Link>
      ) : null}
      {link}
    </div>
  );
}
