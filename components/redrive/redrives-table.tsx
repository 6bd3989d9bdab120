import { OperationsTable } from "@/components/jobs/operations-table";
import { formatCount } from "@/lib/format";
import {
  describeScope,
  displayState,
  fractionOf,
  readNumbers,
  verdictBadge,
  type UiSelection,
} from "@/lib/redrive/ui-format";
import { redriveJobHref } from "@/lib/redrive/ui-links";
import type { RedriveView } from "@/lib/redrive/use-cases";
import { resultOf } from "@/lib/jobs/accounting";

const STAGE_WORDS: Record<string, string> = {
  sample: "sample",
  watching: "watching the sample",
  awaiting_bulk: "sample verdict",
  bulk: "the rest",
  done: "done",
};

/** Redrives, newest first: state, stage, progress with numbers, the fix it follows, who, when. */
export function RedrivesTable({ redrives, showDlq }: { redrives: RedriveView[]; showDlq: boolean }) {
  const rows = redrives.map((r) => {
    const n = readNumbers(r.progress as Record<string, unknown>, r.plan.total);
    return {
      id: r.id,
      href: redriveJobHref(r.connectionId, r.queue, r.id),
      scope: describeScope(r.plan.selection as UiSelection, r.plan.total, r.queue),
      connectionId: r.connectionId,
      queue: r.queue,
      // Paused after its sample is waiting for the operator's go-ahead, not stuck.
      state: displayState(r.state, r.stage),
      result: resultOf(r.progress),
      stateNote:
        r.stage === "awaiting_bulk" && r.sampleVerdict
          ? `sample ${verdictBadge(r.sampleVerdict, r.sampleReturned, r.plan.sampleSize)?.words ?? r.sampleVerdict}`
          : (STAGE_WORDS[r.stage] ?? r.stage),
      fraction: fractionOf(n),
      counts:
        `${formatCount(n.redriven)} / ${formatCount(n.total)} redriven` +
        (n.failed ? ` · ${formatCount(n.failed)} failed` : "") +
        (n.parked ? ` · ${formatCount(n.parked)} parked` : "") +
        (n.returned ? ` · ${formatCount(n.returned)} came back` : ""),
      note: r.plan.fix,
      createdBy: r.createdBy,
      createdAt: r.createdAt,
    };
  });
  return (
    <OperationsTable
      kind="redrive"
      rows={rows}
      showDlq={showDlq}
      noteLabel="Fix it follows"
      empty="No redrives yet. Start one from a DLQ's triage view: a group, a filtered set or chosen letters."
    />
  );
}
