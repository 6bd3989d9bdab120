"use client";

import Link from "@/components/ui/link";
import { formatCount, formatRate, formatSpan, formatUtc } from "@/lib/format";
import { lostClass, lostIn, oldestAge, sampledWords } from "@/lib/operations/ui-figures";
import { useDlqOperations, type DlqOpsProps } from "./dlq-charts";
import { StaleBadge } from "./overview-cells";
import { useNow } from "./use-now";

/** A DLQ's figures from the sampler, each with where it comes from and how old it is. */
export function DlqFigures(props: DlqOpsProps & { warnHours: number; renderedAt: number }) {
  const q = useDlqOperations(props);
  const now = useNow(props.renderedAt, 15_000);
  const s = q.data.status;
  if (!s) {
    return (
      <p className="muted" data-testid="ops-not-sampled">
        Not sampled yet: the sampler has not reached this DLQ. Its figures appear after the next round (every{" "}
        {props.refreshSeconds} s).
      </p>
    );
  }
  const lost = lostIn(s, props.warnHours, now);
  const oldest = oldestAge(s, now);
  return (
    <table className="kv ops-figures" data-testid="ops-figures">
      <tbody>
        <tr>
          <th>Lost in</th>
          <td suppressHydrationWarning>
            <span data-testid="ops-lost" data-tone={lost.tone} className={lostClass(lost.tone)}>
              {lost.text}
            </span>{" "}
            <span className="source-note">{lost.title}</span>
          </td>
        </tr>
        <tr>
          <th>Oldest letter</th>
          <td suppressHydrationWarning>
            <span data-testid="ops-oldest" data-source={s.oldestSource ?? ""}>
              {oldest.text}
            </span>{" "}
            <span className="source-note">{oldest.title}</span>
          </td>
        </tr>
        <tr>
          <th>Retention</th>
          <td data-testid="ops-retention">
            {s.retentionMs === null ? "none seen: letters stay until removed" : formatSpan(s.retentionMs)}
          </td>
        </tr>
        <tr>
          <th>Depth (sampled)</th>
          <td suppressHydrationWarning>
            <span data-testid="ops-depth">{formatCount(s.depth)}</span>{" "}
            <span className="source-note">{sampledWords(s.sampledAt, now)}</span> <StaleBadge ops={s} now={now} />
          </td>
        </tr>
        <tr>
          <th>Inflow, last hour</th>
          <td suppressHydrationWarning>
            <span data-testid="ops-inflow">{formatRate(s.inflowPerMin)}</span>{" "}
            <span className="source-note">
              {s.inflowPerMin === null ? "not known yet: inflow needs two rounds" : "from the sampler's rounds"}
            </span>
          </td>
        </tr>
        <tr>
          <th>Owner</th>
          <td data-testid="ops-owner" data-owner={s.owner?.team ?? ""}>
            {s.owner ? (
              <>
                <span className="strong">{s.owner.team}</span> · <span>{s.owner.contact}</span>{" "}
                <span className="source-note">
                  {s.owner.source === "console" ? "set on the Owners page" : "from the config file"}
                </span>
              </>
            ) : (
              <>
                <span className="muted">no owner</span> · <Link href="/owners">name one on the Owners page</Link>
              </>
            )}
          </td>
        </tr>
        <tr>
          <th>Alerts</th>
          <td data-testid="ops-alerts">
            {s.firingAlerts > 0 ? (
              <span className="badge badge-danger">firing {formatCount(s.firingAlerts)}</span>
            ) : (
              <span className="muted">none firing</span>
            )}
            {s.lastAlertAt ? (
              <span className="source-note"> · last fired or resolved {formatUtc(s.lastAlertAt)}</span>
            ) : null}
          </td>
        </tr>
      </tbody>
    </table>
  );
}
