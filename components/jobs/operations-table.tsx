import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { dlqHref } from "@/lib/dlq/links";
import { truncate } from "@/lib/format";
import type { JobResult } from "@/lib/jobs/accounting";
import { endedWords, type JobKind } from "./operation-job";
import { EmptyRow } from "@/components/ui/empty-row";
import { VisibleText } from "@/components/ui/visible-text";

/** One operation (a redrive or a discard) as a row of the list: what each kind shows, already in words. */
export interface OperationRow {
  id: string;
  /** The job page. */
  href: string;
  /** The scope in words, under the short id. */
  scope: string;
  connectionId: string;
  queue: string;
  state: string;
  /** How an ended job left its selection (`resultOf(progress)`). */
  result?: JobResult | null;
  /** A second line under the state (a redrive's stage). */
  stateNote?: string;
  /** Letters handled of all, for the bar (0..1). */
  fraction: number;
  /** The counts under the bar: "3 / 5 discarded · 1 failed". */
  counts: string;
  /** The operator's own words: the fix a redrive follows, the reason for a discard. */
  note: string;
  createdBy: string | null;
  createdAt: string;
}

const TITLE: Record<JobKind, string> = { discard: "Discard", redrive: "Redrive" };

/**
 * Operations of one kind, newest first: state, progress with numbers, the operator's words, who,
 * when. Test ids are prefixed with the kind: `<kind>s-table`, `<kind>-row` (with `data-id` and
 * `data-state`), `<kind>-link`.
 */
export function OperationsTable({
  kind,
  rows,
  showDlq,
  noteLabel,
  empty,
}: {
  kind: JobKind;
  rows: OperationRow[];
  showDlq: boolean;
  noteLabel: string;
  empty: string;
}) {
  return (
    <div className="table-wrap scroll">
      <table className="grid" data-testid={`${kind}s-table`}>
        <thead>
          <tr>
            <th>{TITLE[kind]}</th>
            {showDlq ? <th>DLQ</th> : null}
            <th>State</th>
            <th>Progress</th>
            <th>{noteLabel}</th>
            <th>Started by</th>
            <th>Started</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-testid={`${kind}-row`} data-state={r.state} data-id={r.id}>
              <td>
                <Link href={r.href} className="mono" data-testid={`${kind}-link`}>
                  {r.id.slice(0, 8)}
                </Link>
                <div className="small muted">{truncate(r.scope, 90)}</div>
              </td>
              {showDlq ? (
                <td className="mono small wrap-anywhere">
                  <Link href={dlqHref(r.connectionId, r.queue)}>
                    <VisibleText text={r.queue} />
                  </Link>
                  <div className="muted">{r.connectionId}</div>
                </td>
              ) : null}
              <td className="nowrap">
                <span className={`badge ${endedWords(r.state, r.result ?? null).badge}`} title={r.result?.summary}>
                  {endedWords(r.state, r.result ?? null).words}
                </span>
                {r.stateNote ? <div className="small muted">{r.stateNote}</div> : null}
              </td>
              <td className="nowrap" style={{ minWidth: 200 }}>
                <div
                  className="progress"
                  role="progressbar"
                  aria-label="Progress"
                  aria-valuemin={0}
                  aria-valuemax={100}
                  aria-valuenow={Math.round(r.fraction * 100)}
                >
                  <div className="progress-fill" style={{ width: `${r.fraction * 100}%` }} />
                </div>
                <div className="small muted">{r.counts}</div>
              </td>
              <td className="small wrap-anywhere" style={{ maxWidth: 320 }} title={r.note}>
                {truncate(r.note, 120)}
              </td>
              <td className="small">{r.createdBy ?? "—"}</td>
              <td className="nowrap">
                <RelativeTime value={r.createdAt} />
              </td>
            </tr>
          ))}
          <EmptyRow show={rows.length === 0} columns={showDlq ? 7 : 6}>
            {empty}
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
