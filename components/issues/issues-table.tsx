import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { VisibleText } from "@/components/ui/visible-text";
import { EmptyRow } from "@/components/ui/empty-row";
import { dlqHref } from "@/lib/dlq/links";
import { formatCount } from "@/lib/format";
import { issueHref } from "@/lib/issues/ui-links";
import type { IssueView } from "@/lib/issues/view";
import { IssueStateBadge } from "./state-badge";
import styles from "./issues.module.css";

/** Failure groups across DLQs, in the order the server gives (new and regressed first, then by growth). */
export function IssuesTable({
  issues,
  connectionNames,
  empty,
}: {
  issues: IssueView[];
  connectionNames: Record<string, string>;
  empty: string;
}) {
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="issues-table">
        <thead>
          <tr>
            <th>State</th>
            <th>Failure</th>
            <th>DLQ</th>
            <th className="num" title="Letters of this failure in the DLQ now / ever indexed">
              Letters
            </th>
            <th className="num" title="Letters of this failure that arrived in the last 24 hours">
              Last 24 h
            </th>
            <th title="When its first and its latest letter were dead-lettered">Seen</th>
            <th>Assignee</th>
          </tr>
        </thead>
        <tbody>
          {issues.map((i) => (
            <tr
              key={`${i.connectionId}\u0000${i.queue}\u0000${i.groupKey}`}
              data-testid="issue-row"
              data-connection-id={i.connectionId}
              data-queue={i.queue}
              data-group={i.groupKey}
              data-state={i.state}
            >
              <td>
                <IssueStateBadge state={i.state} />
              </td>
              <td className={styles.title}>
                <Link href={issueHref(i)} className="mono strong" data-testid="issue-title">
                  <VisibleText text={i.title} />
                </Link>
                {i.normalizedMessage && i.normalizedMessage !== i.title ? (
                  <span className={styles.sub}>
                    <VisibleText text={i.normalizedMessage.slice(0, 200)} />
                  </span>
                ) : null}
              </td>
              <td className={styles.title}>
                <Link href={dlqHref(i.connectionId, i.queue)} className="mono">
                  <VisibleText text={i.queue} />
                </Link>
                <span className={styles.sub}>
                  {connectionNames[i.connectionId] ?? i.connectionId}
                  {i.brokerKind ? ` · ${i.brokerKind}` : ""}
                </span>
              </td>
              <td className="num nowrap" data-testid="issue-letters">
                {formatCount(i.present)} <span className="muted">/ {formatCount(i.letters)}</span>
              </td>
              <td className="num" data-testid="issue-growth">
                {i.growth ? formatCount(i.growth) : <span className="muted">0</span>}
              </td>
              <td className="nowrap">
                <RelativeTime value={i.lastSeenAt} />
                <span className={styles.sub}>
                  first <RelativeTime value={i.firstSeenAt} />
                </span>
              </td>
              <td data-testid="issue-assignee">
                {i.assignee ? (
                  <span title={i.assignee.kind === "owner" ? "A team of the DLQ owners" : "A console user"}>
                    {i.assignee.name}
                  </span>
                ) : (
                  <span className="muted">nobody</span>
                )}
              </td>
            </tr>
          ))}
          <EmptyRow show={issues.length === 0} columns={7}>
            {empty}
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
