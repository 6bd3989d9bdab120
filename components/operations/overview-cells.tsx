import Link from "@/components/ui/link";
import { formatCount, formatRate, formatRelative, formatUtc } from "@/lib/format";
import type { DlqOverviewRow } from "@/lib/operations/queries";
import { lostClass, lostIn, oldestAge, sampledWords } from "@/lib/operations/ui-figures";
import { findingsHref } from "@/lib/operations/ui-links";
import { triageBase } from "@/lib/triage/view-params";
import { SeverityBadge } from "./severity-badge";

/**
 * The operations cells of one DLQ row (figures from the sampler). No hooks: the list passes `now`,
 * so server and client render the same words for the same instant. Every figure's title says where
 * it comes from and how old it is.
 */
type Ops = DlqOverviewRow | null;

const NOT_SAMPLED = "Not sampled yet: the sampler has not reached this DLQ.";

export function InflowCell({ ops, now }: { ops: Ops; now: number }) {
  if (!ops)
    return (
      <span className="muted" data-testid="dlq-inflow" title={NOT_SAMPLED}>
        —
      </span>
    );
  const title =
    ops.inflowPerMin === null
      ? `Not known yet: inflow needs two rounds of the sampler (${sampledWords(ops.sampledAt, now)}).`
      : `Letters per minute entering over the last hour, from the sampler's rounds (${sampledWords(ops.sampledAt, now)}).`;
  return (
    <span data-testid="dlq-inflow" title={title} suppressHydrationWarning>
      {formatRate(ops.inflowPerMin)}
    </span>
  );
}

export function OldestCell({ ops, now }: { ops: Ops; now: number }) {
  const f = oldestAge(ops, now);
  return (
    <span
      data-testid="dlq-oldest"
      data-source={ops?.oldestSource ?? ""}
      title={f.title}
      className={ops ? undefined : "muted"}
      suppressHydrationWarning
    >
      {f.text}
      {ops?.oldestSource === "scan" && ops.depth !== 0 ? (
        <span className="source-note" suppressHydrationWarning>
          {" "}
          as of the scan {formatRelative(ops.oldestAsOf, now)}
        </span>
      ) : null}
    </span>
  );
}

export function LostInCell({ ops, warnHours, now }: { ops: Ops; warnHours: number; now: number }) {
  const l = lostIn(ops, warnHours, now);
  if (ops && l.tone === "unknown") {
    // The age comes from a scan where the broker does not tell it: the way to one.
    return (
      <Link
        href={triageBase(ops.connectionId, ops.queue)}
        data-testid="dlq-lost"
        data-tone={l.tone}
        className={lostClass(l.tone)}
        title={l.title}
      >
        {l.text}
      </Link>
    );
  }
  return (
    <span
      data-testid="dlq-lost"
      data-tone={l.tone}
      className={lostClass(l.tone)}
      title={l.title}
      suppressHydrationWarning
    >
      {l.text}
    </span>
  );
}

export function OwnerCell({ ops }: { ops: Ops }) {
  if (!ops)
    return (
      <span className="muted" data-testid="dlq-owner" title={NOT_SAMPLED}>
        —
      </span>
    );
  if (!ops.owner) {
    return (
      <Link
        href="/owners"
        className="muted"
        data-testid="dlq-owner"
        data-owner=""
        title="No owner entry matches this DLQ: name one on the Owners page"
      >
        no owner
      </Link>
    );
  }
  return (
    <span
      data-testid="dlq-owner"
      data-owner={ops.owner.team}
      title={ops.owner.source === "console" ? "Owner set on the Owners page" : "Owner from the console's config file"}
    >
      <span className="strong">{ops.owner.team}</span>
      <span className="owner-contact">{ops.owner.contact}</span>
    </span>
  );
}

export function FindingsCell({ ops }: { ops: Ops }) {
  if (!ops)
    return (
      <span className="muted" data-testid="dlq-findings" data-count={0} title={NOT_SAMPLED}>
        —
      </span>
    );
  if (ops.openFindings === 0 || !ops.worstFinding) {
    return (
      <span className="muted" data-testid="dlq-findings" data-count={0} title="No open configuration finding">
        none
      </span>
    );
  }
  const n = ops.openFindings;
  return (
    <Link
      href={findingsHref({ connection: ops.connectionId, dlq: ops.queue })}
      data-testid="dlq-findings"
      data-count={n}
      data-severity={ops.worstFinding}
      title={`${n} open configuration finding${n === 1 ? "" : "s"}, the worst ${ops.worstFinding}: open the findings of this DLQ`}
      aria-label={`${n} open finding${n === 1 ? "" : "s"}, worst ${ops.worstFinding}`}
    >
      <SeverityBadge severity={ops.worstFinding}>
        {ops.worstFinding} · {formatCount(n)}
      </SeverityBadge>
    </Link>
  );
}

export function LastAlertCell({ ops, now }: { ops: Ops; now: number }) {
  if (!ops?.lastAlertAt) {
    return (
      <span
        className="muted"
        data-testid="dlq-last-alert"
        title={ops ? "No alert has fired for this DLQ" : NOT_SAMPLED}
      >
        —
      </span>
    );
  }
  return (
    <span
      data-testid="dlq-last-alert"
      title={`An alert last fired or resolved at ${formatUtc(ops.lastAlertAt)}`}
      suppressHydrationWarning
    >
      {ops.firingAlerts > 0 ? <span className="badge badge-danger">firing {formatCount(ops.firingAlerts)}</span> : null}{" "}
      {formatRelative(ops.lastAlertAt, now)}
    </span>
  );
}

/** "stale" or "gone" when the sampler's figures are not from its last round. */
export function StaleBadge({ ops, now }: { ops: Ops; now: number }) {
  if (!ops) return null;
  if (ops.missingSince) {
    return (
      <span
        className="badge badge-warn"
        data-testid="dlq-gone"
        title={`Not seen on its broker since ${formatUtc(ops.missingSince)}`}
        suppressHydrationWarning
      >
        gone {formatRelative(ops.missingSince, now)}
      </span>
    );
  }
  if (ops.error) {
    return (
      <span
        className="badge badge-warn"
        data-testid="dlq-stale"
        title={`The last sampling round could not reach the broker: figures are from ${formatUtc(ops.sampledAt)}`}
        suppressHydrationWarning
      >
        stale · {formatRelative(ops.sampledAt, now)}
      </span>
    );
  }
  return null;
}
