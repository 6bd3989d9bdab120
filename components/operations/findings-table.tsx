import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { EmptyRow } from "@/components/ui/empty-row";
import type { FindingRow } from "@/lib/operations/findings";
import { healthHref } from "@/lib/operations/ui-links";
import { AcknowledgeButton } from "./acknowledge-button";
import { SeverityBadge } from "./severity-badge";
import { VisibleText } from "@/components/ui/visible-text";

/**
 * Configuration findings: what is at fault, why it loses or risks letters, how to fix it, and who
 * has seen it. Broker object names, DLQ names and the words are broker data: rendered as text only.
 * `dlqColumns` false: the table sits on one DLQ's page and leaves out its connection and name.
 */
export function FindingsTable({
  findings,
  canAcknowledge,
  connectionNames,
  dlqColumns = true,
  empty,
}: {
  findings: FindingRow[];
  canAcknowledge: boolean;
  /** Connection id → display name. */
  connectionNames: Record<string, string>;
  dlqColumns?: boolean;
  empty: string;
}) {
  const history = findings.some((f) => f.resolvedAt !== null);
  const columns = 7 + (dlqColumns ? 2 : 0) + (history ? 1 : 0);
  return (
    <div className="table-wrap">
      <table className="grid findings" data-testid="findings-table">
        <thead>
          <tr>
            <th>Severity</th>
            {dlqColumns ? <th>Connection</th> : null}
            <th>Broker object</th>
            {dlqColumns ? <th>DLQ</th> : null}
            <th>Why</th>
            <th>Fix</th>
            <th>First seen</th>
            <th>Last seen</th>
            {history ? <th>Resolved</th> : null}
            <th>Acknowledged</th>
          </tr>
        </thead>
        <tbody>
          {findings.map((f) => (
            <tr
              key={f.id}
              data-testid="finding-row"
              data-id={f.id}
              data-code={f.code}
              data-severity={f.severity}
              data-state={f.resolvedAt ? "resolved" : "open"}
              data-queue={f.queue ?? ""}
            >
              <td>
                <SeverityBadge severity={f.severity} />
              </td>
              {dlqColumns ? (
                <td>
                  <span title={f.connectionId}>{connectionNames[f.connectionId] ?? f.connectionId}</span>
                </td>
              ) : null}
              <td className="mono wrap-anywhere finding-object" data-testid="finding-object">
                {f.object}
                <div className="source-note">{f.code}</div>
              </td>
              {dlqColumns ? (
                <td className="wrap-anywhere">
                  {f.queue ? (
                    <>
                      <Link href={healthHref(f.connectionId, f.queue)} className="mono" data-testid="finding-dlq">
                        <VisibleText text={f.queue} />
                      </Link>
                      <div className="source-note" data-testid="finding-owner">
                        {f.ownerTeam ? `owner: ${f.ownerTeam}` : "no owner"}
                      </div>
                    </>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              ) : null}
              <td className="finding-text" data-testid="finding-why">
                {f.why}
              </td>
              <td className="finding-text finding-fix" data-testid="finding-fix">
                {f.fix}
              </td>
              <td className="nowrap">
                <RelativeTime value={f.firstSeenAt} />
              </td>
              <td className="nowrap">
                <RelativeTime value={f.lastSeenAt} />
              </td>
              {history ? (
                <td className="nowrap" data-testid="finding-resolved">
                  {f.resolvedAt ? (
                    <RelativeTime value={f.resolvedAt} />
                  ) : (
                    <span className="badge badge-warn">open</span>
                  )}
                </td>
              ) : null}
              <td data-testid="finding-acknowledged">
                {f.acknowledgedAt ? (
                  <span data-testid="finding-ack-by">
                    <span className="wrap-anywhere">{f.acknowledgedBy}</span> ·{" "}
                    <RelativeTime value={f.acknowledgedAt} />
                  </span>
                ) : canAcknowledge && !f.resolvedAt ? (
                  <AcknowledgeButton id={f.id} />
                ) : (
                  <span className="muted">not yet</span>
                )}
              </td>
            </tr>
          ))}
          <EmptyRow show={findings.length === 0} columns={columns}>
            {empty}
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
