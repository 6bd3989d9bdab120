import { RelativeTime } from "@/components/ui/relative-time";
import { VisibleText } from "@/components/ui/visible-text";
import type { IssueEventView } from "@/lib/issues/view";
import { IssueStateBadge } from "./state-badge";
import styles from "./issues.module.css";

/** Who did what to a failure group, newest first: state changes, notes, links (as text, with their host) and assignments. */
export function IssueHistory({ history }: { history: IssueEventView[] }) {
  if (history.length === 0) return <p className="hint">Nothing yet.</p>;
  const rows = [...history].sort((a, b) => b.at.localeCompare(a.at) || Number(b.id) - Number(a.id));
  return (
    <ol className={styles.history} data-testid="issue-history">
      {rows.map((e) => (
        <li key={e.id} data-testid="issue-event" data-kind={e.kind}>
          <RelativeTime value={e.at} full /> ·{" "}
          <span className="strong">{e.actor === "system" || !e.actor ? "the console" : e.actor}</span> <Entry e={e} />
        </li>
      ))}
    </ol>
  );
}

function Entry({ e }: { e: IssueEventView }) {
  switch (e.kind) {
    case "state":
      return (
        <>
          {e.fromState ? (
            <>
              moved it from <IssueStateBadge state={e.fromState} /> to{" "}
            </>
          ) : (
            "saw it first: "
          )}
          {e.toState ? <IssueStateBadge state={e.toState} /> : null}
          {e.text ? (
            <span className={styles.entryText}>
              <VisibleText text={e.text} />
            </span>
          ) : null}
        </>
      );
    case "note":
      return (
        <>
          wrote
          <span className={styles.entryText} data-testid="issue-note-text">
            <VisibleText text={e.text ?? ""} />
          </span>
        </>
      );
    case "link":
      // Shown as text, never followed from here: the host says where it leads.
      return (
        <>
          linked{" "}
          {e.link?.host ? (
            <span className="badge" title="The link's host">
              {e.link.host}
            </span>
          ) : null}
          <span className={`mono ${styles.entryText}`} data-testid="issue-link-text">
            <VisibleText text={e.link?.url ?? e.text ?? ""} />
          </span>
        </>
      );
    case "assign":
      return (
        <>{e.text ? `assigned it to ${e.text.replace(/^owner:/, "team ").replace(/^user:/, "")}` : "unassigned it"}</>
      );
  }
}
