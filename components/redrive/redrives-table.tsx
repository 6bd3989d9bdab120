import Link from "next/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { dlqHref } from "@/lib/dlq/links";
import { formatCount, truncate } from "@/lib/format";
import { describeScope, fractionOf, readNumbers, STATE_BADGE, STATE_WORDS, type UiSelection } from "@/lib/redrive/ui-format";
import { redriveJobHref } from "@/lib/redrive/ui-links";
import type { RedriveView } from "@/lib/redrive/use-cases";

const STAGE_WORDS: Record<string, string> = { sample: "sample", watching: "watching the sample", awaiting_bulk: "sample verdict", bulk: "the rest", done: "done" };

/** Redrives, newest first: state, stage, progress with numbers, who, when. */
export function RedrivesTable({ redrives, showDlq }: { redrives: RedriveView[]; showDlq: boolean }) {
  return (
    <div className="table-wrap scroll">
      <table className="grid" data-testid="redrives-table">
        <thead>
          <tr>
            <th>Redrive</th>
            {showDlq ? <th>DLQ</th> : null}
            <th>State</th>
            <th>Progress</th>
            <th>Fix it follows</th>
            <th>Started by</th>
            <th>Started</th>
          </tr>
        </thead>
        <tbody>
          {redrives.map((r) => {
            const n = readNumbers(r.progress as Record<string, unknown>, r.plan.total);
            const f = fractionOf(n);
            return (
              <tr key={r.id} data-testid="redrive-row" data-state={r.state} data-id={r.id}>
                <td>
                  <Link href={redriveJobHref(r.connectionId, r.queue, r.id)} className="mono" data-testid="redrive-link">
                    {r.id.slice(0, 8)}
                  </Link>
                  <div className="small muted">{truncate(describeScope(r.plan.selection as UiSelection, r.plan.total, r.queue), 90)}</div>
                </td>
                {showDlq ? (
                  <td className="mono small wrap-anywhere">
                    <Link href={dlqHref(r.connectionId, r.queue)}>{r.queue}</Link>
                    <div className="muted">{r.connectionId}</div>
                  </td>
                ) : null}
                <td className="nowrap">
                  <span className={`badge ${STATE_BADGE[r.state] ?? ""}`}>{STATE_WORDS[r.state] ?? r.state}</span>
                  <div className="small muted">{STAGE_WORDS[r.stage] ?? r.stage}</div>
                </td>
                <td className="nowrap" style={{ minWidth: 200 }}>
                  <div className="progress" role="progressbar" aria-label="Progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(f * 100)}>
                    <div className="progress-fill" style={{ width: `${f * 100}%` }} />
                  </div>
                  <div className="small muted">
                    {formatCount(n.redriven)} / {formatCount(n.total)} redriven
                    {n.failed ? ` · ${formatCount(n.failed)} failed` : ""}
                    {n.parked ? ` · ${formatCount(n.parked)} parked` : ""}
                    {n.returned ? ` · ${formatCount(n.returned)} came back` : ""}
                  </div>
                </td>
                <td className="small wrap-anywhere" style={{ maxWidth: 320 }} title={r.plan.fix}>
                  {truncate(r.plan.fix, 120)}
                </td>
                <td className="small">{r.createdBy ?? "—"}</td>
                <td className="nowrap">
                  <RelativeTime value={r.createdAt} />
                </td>
              </tr>
            );
          })}
          {redrives.length === 0 ? (
            <tr>
              <td colSpan={showDlq ? 7 : 6} className="empty">
                No redrives yet. Start one from a DLQ&apos;s triage view: a group, a filtered set or chosen letters.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
