import { STATE_LABELS } from "@/lib/issues/ui-links";
import type { IssueState } from "@/lib/triage/issue-lifecycle";

const TONE: Record<IssueState, string> = {
  new: "badge badge-warn",
  regressed: "badge badge-danger",
  acknowledged: "badge badge-info",
  resolved: "badge badge-ok",
  ignored: "badge",
};

const MEANING: Record<IssueState, string> = {
  new: "Seen for the first time; nobody has acknowledged it yet",
  regressed: "Resolved or ignored before, and letters that fail this way arrived again",
  acknowledged: "Someone knows about it; it stays open until resolved",
  resolved: "Marked fixed; a new letter of this failure reopens it as regressed",
  ignored: "Silenced: no alert while ignored",
};

/** A failure group's lifecycle state, with what it means on hover. */
export function IssueStateBadge({ state, testId = "issue-state" }: { state: IssueState; testId?: string }) {
  return (
    <span className={TONE[state]} title={MEANING[state]} data-testid={testId} data-state={state}>
      {STATE_LABELS[state]}
    </span>
  );
}
