import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { AssignForm, LinkForm, NoteForm } from "@/components/issues/issue-forms";
import { IssueHistory } from "@/components/issues/issue-history";
import { IssueTrend } from "@/components/issues/issue-trend";
import { IssueStateBadge } from "@/components/issues/state-badge";
import { IssueStateControls } from "@/components/issues/state-change";
import styles from "@/components/issues/issues.module.css";
import { groupRepairHref } from "@/components/repair-group/links";
import Link from "@/components/ui/link";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { VisibleText } from "@/components/ui/visible-text";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { loadConfig } from "@/lib/config";
import { newDiscardHref } from "@/lib/discard/ui-links";
import { decodeParam, dlqHref, letterHref } from "@/lib/dlq/links";
import { formatCount, formatUtc } from "@/lib/format";
import { failuresHref, issueHref } from "@/lib/issues/ui-links";
import { getIssue } from "@/lib/issues/use-cases";
import type { IssueView } from "@/lib/issues/view";
import { listOwners } from "@/lib/operations/use-cases";
import { newRedriveQuery } from "@/lib/redrive/ui-format";
import { newRedriveHref } from "@/lib/redrive/ui-links";
import { repairEnabled } from "@/lib/repair/policy";
import { triageHref } from "@/lib/triage/view-params";
import { asAppError } from "@/lib/errors";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Failure" };

type Params = { connectionId: string; queue: string; groupKey: string };

/**
 * One failure group as an issue: its state and what it means, its trend over its life, its newest
 * letters, who it is assigned to, its notes, links and history, and what can be done to its
 * letters (redrive, repair, discard: the DLQ's own forms, scoped to this group).
 */
export default async function FailurePage({ params }: { params: Promise<Params> }) {
  const p = await params;
  const ref = {
    connectionId: decodeParam(p.connectionId),
    queue: decodeParam(p.queue),
    groupKey: decodeParam(p.groupKey),
  };
  const actor = await requirePageActor(issueHref(ref));
  const meta = await requestMeta();
  let loaded: Awaited<ReturnType<typeof getIssue>>;
  try {
    loaded = await getIssue(actor, meta, ref);
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    if (err.type === "not_found") notFound();
    return (
      <main className="page">
        <Problem title="This failure could not be read." back={{ href: "/failures", label: "← Failures" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const { issue, history, activity } = loaded;
  const canWrite = can(actor.role, "issues:write");
  const teams = canWrite ? [...new Set((await listOwners(actor, meta).catch(() => [])).map((o) => o.team))].sort() : [];
  const group = newRedriveQuery({ view: { group: ref.groupKey } });
  return (
    <main className="page">
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link href="/failures">Failures</Link> ›{" "}
        <Link href={failuresHref({ tab: "all", connection: ref.connectionId, dlq: ref.queue })} className="mono">
          <VisibleText text={ref.queue} />
        </Link>
      </nav>
      <div className="page-head">
        <h1 className={`mono ${styles.title}`} data-testid="issue-heading">
          <VisibleText text={issue.title} />
        </h1>
        <IssueStateBadge state={issue.state} testId="issue-page-state" />
      </div>
      <p className="hint" data-testid="issue-state-line">
        <StateLine issue={issue} />
      </p>
      <section className="card">
        <table className="kv">
          <tbody>
            <tr>
              <th>DLQ</th>
              <td>
                <Link href={dlqHref(ref.connectionId, ref.queue)} className="mono">
                  <VisibleText text={ref.queue} />
                </Link>{" "}
                <span className="muted">
                  {ref.connectionId}
                  {issue.brokerKind ? ` · ${issue.brokerKind}` : ""}
                  {issue.owner ? ` · owned by ${issue.owner.team}` : ""}
                </span>
              </td>
            </tr>
            {issue.exceptionClass && issue.exceptionClass !== issue.title ? (
              <tr>
                <th>Class</th>
                <td className="mono">
                  <VisibleText text={issue.exceptionClass} />
                </td>
              </tr>
            ) : null}
            {issue.normalizedMessage ? (
              <tr>
                <th>Message</th>
                <td className={styles.title}>
                  <VisibleText text={issue.normalizedMessage} />
                </td>
              </tr>
            ) : null}
            <tr>
              <th>Letters</th>
              <td data-testid="issue-counts">
                {formatCount(issue.present)} in the DLQ now · {formatCount(issue.letters)} ever indexed ·{" "}
                {formatCount(issue.growth)} in the last 24 h
              </td>
            </tr>
            <tr>
              <th>Seen</th>
              <td>
                first <RelativeTime value={issue.firstSeenAt} full /> · last{" "}
                <RelativeTime value={issue.lastSeenAt} full testId="issue-last-seen" />
                <span className="hint"> (the letters&apos; own dead-letter times)</span>
              </td>
            </tr>
            <tr>
              <th>Assignee</th>
              <td data-testid="issue-assignee">
                {issue.assignee
                  ? `${issue.assignee.name} (${issue.assignee.kind === "owner" ? "team" : "user"})`
                  : "nobody"}
              </td>
            </tr>
          </tbody>
        </table>
      </section>
      {canWrite ? (
        <section className="card" data-testid="issue-change">
          <h2>Change</h2>
          <div className={styles.forms}>
            <IssueStateControls {...ref} />
            <AssignForm issue={ref} current={issue.assignee} teams={teams} />
          </div>
        </section>
      ) : (
        <p className="hint">Operators and admins change a failure&apos;s state, assignee, notes and links.</p>
      )}
      <section className="card">
        <h2>Letters per hour</h2>
        <IssueTrend hourly={activity.hourly} />
      </section>
      <section className="card" data-testid="issue-letters-section">
        <h2>Letters</h2>
        <div className="toolbar">
          <Link
            href={triageHref(ref.connectionId, ref.queue, { group: ref.groupKey })}
            className="btn btn-small"
            data-testid="issue-triage"
          >
            All letters of this group
          </Link>
          {can(actor.role, "redrive:sample") ? (
            <Link
              href={`${newRedriveHref(ref.connectionId, ref.queue)}${group}`}
              className="btn btn-small"
              data-testid="issue-redrive"
            >
              Redrive…
            </Link>
          ) : null}
          {can(actor.role, "letter:repair") && repairEnabled(loadConfig().repair, ref.connectionId, ref.queue) ? (
            <Link
              href={groupRepairHref(ref.connectionId, ref.queue, group)}
              className="btn btn-small"
              data-testid="issue-repair"
            >
              Repair…
            </Link>
          ) : null}
          {can(actor.role, "discard:run") ? (
            <Link
              href={`${newDiscardHref(ref.connectionId, ref.queue)}${group}`}
              className="btn btn-small btn-quiet"
              data-testid="issue-discard"
            >
              Discard…
            </Link>
          ) : null}
        </div>
        {activity.samples.length ? (
          <ul data-testid="issue-samples">
            {activity.samples.map((id) => (
              <li key={id}>
                <Link href={letterHref(ref.connectionId, ref.queue, id)} className="mono">
                  <VisibleText text={id} />
                </Link>
              </li>
            ))}
          </ul>
        ) : (
          <p className="hint">No letter of this group is in the DLQ now (as of its last indexing).</p>
        )}
      </section>
      <section className="card" data-testid="issue-history-section">
        <h2>History, notes and links</h2>
        {canWrite ? (
          <div className={styles.forms}>
            <NoteForm issue={ref} />
            <LinkForm issue={ref} />
          </div>
        ) : null}
        <IssueHistory history={history} />
      </section>
    </main>
  );
}

function StateLine({ issue }: { issue: IssueView }) {
  const by = issue.stateChangedBy === "system" ? "by the console" : `by ${issue.stateChangedBy}`;
  const when = formatUtc(issue.stateChangedAt);
  switch (issue.state) {
    case "new":
      return <>First seen {when}; nobody has acknowledged it yet.</>;
    case "regressed":
      return <>Regressed {when}: letters that fail this way arrived again after it was resolved or ignored.</>;
    case "acknowledged":
      return (
        <>
          Acknowledged {when} {by}.
        </>
      );
    case "resolved":
      return (
        <>
          Resolved {when} {by}
          {issue.resolveNote ? (
            <>
              : <VisibleText text={issue.resolveNote} />
            </>
          ) : null}
          . A new letter that fails this way reopens it as regressed.
        </>
      );
    case "ignored": {
      const i = issue.ignore;
      const until =
        i?.mode === "until_time"
          ? `until ${formatUtc(i.until)}`
          : i?.mode === "until_count"
            ? `until ${formatCount(i.remaining)} more letter${i.remaining === 1 ? "" : "s"} (of ${formatCount(i.letters)})`
            : "for good";
      return (
        <>
          Ignored {until}, {by} {when}: no alert while ignored.
        </>
      );
    }
  }
}
