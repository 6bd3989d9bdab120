import type { Metadata } from "next";
import Link from "@/components/ui/link";
import { IssuesTable } from "@/components/issues/issues-table";
import { BulkStateControls } from "@/components/issues/state-change";
import { Problem } from "@/components/ui/problem";
import { can } from "@/lib/auth/permissions";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { formatCount } from "@/lib/format";
import {
  FAILURE_TAB_NAMES,
  FAILURE_TABS,
  failuresFilter,
  failuresHref,
  parseFailuresParams,
  type FailuresView,
} from "@/lib/issues/ui-links";
import { LIST_LIMIT, listIssues, type IssueList } from "@/lib/issues/use-cases";
import { connectionChoices } from "@/lib/operations/ui-settings";
import type { IssueState } from "@/lib/triage/issue-lifecycle";
import { asAppError } from "@/lib/errors";

export const metadata: Metadata = { title: "Failures" };
export const dynamic = "force-dynamic";

type Search = Record<string, string | string[] | undefined>;

/**
 * Failures as issues, across every DLQ and broker: each triage group with its lifecycle (new,
 * acknowledged, resolved, regressed, ignored), new and regressed first, then by growth. Operators
 * change the state of one group on its page, or of every group a filter matches here.
 */
export default async function FailuresPage({ searchParams }: { searchParams: Promise<Search> }) {
  const parsed = parseFailuresParams(await searchParams);
  const actor = await requirePageActor(parsed.ok ? failuresHref(parsed.value) : "/failures");
  const head = (
    <div className="page-head">
      <h1>Failures</h1>
      <span className="meta">
        Every way letters fail, across DLQs: one entry per triage group, kept current as letters are indexed. A failure
        you resolved comes back as regressed when it fails again.
      </span>
    </div>
  );
  if (!parsed.ok) {
    return (
      <main className="page">
        {head}
        <Problem title="This link's options are not valid." back={{ href: "/failures", label: "← Open failures" }}>
          <p>{parsed.message}</p>
        </Problem>
      </main>
    );
  }
  const view = parsed.value;
  const filter = failuresFilter(view);
  let list: IssueList;
  try {
    list = await listIssues(actor, await requestMeta(), filter);
  } catch (e) {
    const err = asAppError(e);
    if (!err) throw e;
    return (
      <main className="page">
        {head}
        <Problem
          title={err.type === "bad_request" ? "This view cannot be shown." : "The failures could not be read."}
          back={{ href: "/failures", label: "← Open failures" }}
        >
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const connections = connectionChoices();
  const names = Object.fromEntries(connections.map((c) => [c.id, c.name]));
  const filtered = !!(view.assignee || view.owner || view.broker || view.connection || view.dlq);
  const inTab = (states: readonly IssueState[]) => states.reduce((n, s) => n + list.counts[s], 0);
  return (
    <main className="page">
      {head}
      <nav className="tabs" aria-label="Failures by state" data-testid="failures-tabs">
        {FAILURE_TAB_NAMES.map((t) => (
          <Link
            key={t}
            href={failuresHref({ ...view, tab: t })}
            aria-current={view.tab === t ? "page" : undefined}
            data-testid={`failures-tab-${t}`}
          >
            {FAILURE_TABS[t].label} <span className="muted">{formatCount(inTab(FAILURE_TABS[t].states))}</span>
          </Link>
        ))}
      </nav>
      <FailuresFilter view={view} connections={connections} />
      <div className="toolbar">
        <strong className="match-count" data-testid="issues-count" data-count={list.total}>
          {formatCount(list.total)} {list.total === 1 ? "failure" : "failures"}
          {filtered ? (list.total === 1 ? " matches" : " match") : ""}
        </strong>
        {list.total > list.issues.length ? (
          <span className="hint">
            showing the first {formatCount(LIST_LIMIT)}: filter by DLQ or connection to see the rest
          </span>
        ) : null}
        <span className="spacer" />
        {!can(actor.role, "issues:write") ? (
          <span className="hint">Operators and admins change the state of failures.</span>
        ) : null}
      </div>
      {can(actor.role, "issues:write") && list.total > 0 ? (
        <details className="card" data-testid="issues-bulk-panel">
          <summary>
            Change all {formatCount(list.total)} listed {list.total === 1 ? "failure" : "failures"} at once
          </summary>
          <BulkStateControls filter={filter} count={list.total} />
        </details>
      ) : null}
      <IssuesTable
        issues={list.issues}
        connectionNames={names}
        empty={
          filtered
            ? "No failure matches these filters."
            : view.tab === "attention"
              ? "Nothing needs attention: no new or regressed failure."
              : "No failures here. Groups appear as DLQs are indexed (on their own where reading is free, or by a scan on a DLQ's Triage tab)."
        }
      />
    </main>
  );
}

/** A plain GET form: the view is its URL, and works before the page's scripts load. */
function FailuresFilter({
  view,
  connections,
}: {
  view: FailuresView;
  connections: Array<{ id: string; name: string }>;
}) {
  return (
    <form method="get" action="/failures" className="toolbar" data-testid="failures-filter">
      {view.tab !== "open" ? <input type="hidden" name="tab" value={view.tab} /> : null}
      <label className="field-inline">
        Broker
        <select name="broker" defaultValue={view.broker ?? ""}>
          <option value="">any</option>
          <option value="rabbitmq">RabbitMQ</option>
          <option value="sqs">SQS</option>
          <option value="kafka">Kafka</option>
          <option value="pulsar">Pulsar</option>
        </select>
      </label>
      <label className="field-inline">
        Connection
        <select name="connection" defaultValue={view.connection ?? ""}>
          <option value="">any</option>
          {connections.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label className="field-inline">
        DLQ
        <input name="dlq" defaultValue={view.dlq ?? ""} placeholder="exact name" maxLength={255} />
      </label>
      <label className="field-inline">
        Owner
        <input name="owner" defaultValue={view.owner ?? ""} placeholder="team" maxLength={100} />
      </label>
      <label className="field-inline">
        Assignee
        <input name="assignee" defaultValue={view.assignee ?? ""} placeholder="team, e-mail or none" maxLength={320} />
      </label>
      <button type="submit" className="btn btn-small">
        Apply
      </button>
      {view.assignee || view.owner || view.broker || view.connection || view.dlq ? (
        <Link href={failuresHref({ tab: view.tab })} className="btn btn-small btn-quiet">
          Clear
        </Link>
      ) : null}
    </form>
  );
}
