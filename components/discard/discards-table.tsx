import { OperationsTable } from "@/components/jobs/operations-table";
import { discardJobHref } from "@/lib/discard/ui-links";
import type { DiscardView } from "@/lib/discard/use-cases";
import { formatCount } from "@/lib/format";
import { describeScope, type UiSelection } from "@/lib/redrive/ui-format";
import { resultOf } from "@/lib/jobs/accounting";

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Discards, newest first: state, progress with numbers (discarded, failed, missing), the reason, who, when. */
export function DiscardsTable({ discards, showDlq }: { discards: DiscardView[]; showDlq: boolean }) {
  const rows = discards.map((d) => {
    const p = d.progress as Record<string, unknown>;
    const total = num(p.total) || d.total;
    const discarded = num(p.discarded);
    const failed = num(p.failed);
    const missing = num(p.missing);
    return {
      id: d.id,
      href: discardJobHref(d.connectionId, d.queue, d.id),
      scope: describeScope(d.selection as UiSelection, d.total, d.queue),
      connectionId: d.connectionId,
      queue: d.queue,
      state: d.state,
      result: resultOf(d.progress),
      stateNote: d.cancelRequested && (d.state === "queued" || d.state === "running") ? "cancelling" : undefined,
      fraction: total > 0 ? Math.min(1, num(p.read) / total) : 0,
      counts:
        `${formatCount(discarded)} / ${formatCount(total)} discarded` +
        (failed ? ` · ${formatCount(failed)} failed` : "") +
        (missing ? ` · ${formatCount(missing)} missing` : ""),
      note: d.reason,
      createdBy: d.createdBy,
      createdAt: d.createdAt,
    };
  });
  return (
    <OperationsTable
      kind="discard"
      rows={rows}
      showDlq={showDlq}
      noteLabel="Reason"
      empty="No discards yet. An admin starts one from a DLQ's triage view or a letter's page, with a reason."
    />
  );
}
