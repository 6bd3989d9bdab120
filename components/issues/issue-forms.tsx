"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState, useTransition } from "react";
import { addIssueLinkAction, addIssueNoteAction, assignIssueAction } from "@/app/failures/actions";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { ActionResult } from "@/lib/errors";
import styles from "./issues.module.css";

type Ref = { connectionId: string; queue: string; groupKey: string };

/** Submits, shows the server's refusal in its words, refreshes the page on success. */
function useSubmit() {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const submit = (work: () => Promise<ActionResult<unknown>>, after?: () => void) =>
    start(async () => {
      setError(null);
      const r = await work();
      if (!r.ok) setError(r.error.message);
      else {
        after?.();
        router.refresh();
      }
    });
  return { pending, error, submit };
}

function ErrorLine({ error, testId }: { error: string | null; testId: string }) {
  return error ? (
    <span className="form-error" role="alert" data-testid={testId}>
      {error}
    </span>
  ) : null;
}

/** Assign to a team of the DLQ owners or a console user (by e-mail); empty unassigns. */
export function AssignForm({
  issue,
  current,
  teams,
}: {
  issue: Ref;
  current: { kind: "owner" | "user"; name: string } | null;
  teams: string[];
}) {
  const hydrated = useHydrated();
  const { pending, error, submit } = useSubmit();
  const [kind, setKind] = useState<"owner" | "user">(current?.kind ?? "owner");
  const [name, setName] = useState(current?.name ?? "");
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const n = name.trim();
    submit(() => assignIssueAction({ ...issue, assignee: n ? { kind, name: n } : null }));
  };
  return (
    <form onSubmit={onSubmit} data-testid="issue-assign-form">
      <label className="sr-only" htmlFor="issue-assign-kind">
        Assign to a
      </label>
      <select id="issue-assign-kind" value={kind} onChange={(e) => setKind(e.target.value as "owner" | "user")}>
        <option value="owner">team</option>
        <option value="user">user (e-mail)</option>
      </select>
      <label className="sr-only" htmlFor="issue-assign-name">
        Name
      </label>
      <input
        id="issue-assign-name"
        data-testid="issue-assign-name"
        list={kind === "owner" ? "issue-teams" : undefined}
        value={name}
        onChange={(e) => setName(e.target.value)}
        placeholder={kind === "owner" ? "a team from Owners" : "someone@example.com"}
        maxLength={320}
      />
      <datalist id="issue-teams">
        {teams.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <button type="submit" className="btn btn-small" data-testid="issue-assign" disabled={!hydrated || pending}>
        {name.trim() ? "Assign" : "Unassign"}
      </button>
      <ErrorLine error={error} testId="issue-assign-error" />
    </form>
  );
}

/** A note on the group, kept in its history (stored as typed, shown as text). */
export function NoteForm({ issue }: { issue: Ref }) {
  const hydrated = useHydrated();
  const { pending, error, submit } = useSubmit();
  const [text, setText] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        submit(
          () => addIssueNoteAction({ ...issue, text }),
          () => setText(""),
        );
      }}
      data-testid="issue-note-form"
    >
      <label className="sr-only" htmlFor="issue-note">
        Note
      </label>
      <textarea
        id="issue-note"
        data-testid="issue-note"
        value={text}
        maxLength={4000}
        placeholder="What you know: the cause, the fix, who is on it"
        onChange={(e) => setText(e.target.value)}
      />
      <button type="submit" className="btn btn-small" data-testid="issue-add-note" disabled={!hydrated || pending}>
        Add note
      </button>
      <ErrorLine error={error} testId="issue-note-error" />
    </form>
  );
}

/** A link (http or https) to a ticket, a fix or a runbook; shown as text with its host. */
export function LinkForm({ issue }: { issue: Ref }) {
  const hydrated = useHydrated();
  const { pending, error, submit } = useSubmit();
  const [url, setUrl] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        submit(
          () => addIssueLinkAction({ ...issue, url }),
          () => setUrl(""),
        );
      }}
      data-testid="issue-link-form"
      className={styles.linkForm}
    >
      <label className="sr-only" htmlFor="issue-link">
        Link
      </label>
      <input
        id="issue-link"
        data-testid="issue-link"
        value={url}
        maxLength={2000}
        placeholder="https://tickets.example.com/OPS-123"
        onChange={(e) => setUrl(e.target.value)}
      />
      <button type="submit" className="btn btn-small" data-testid="issue-add-link" disabled={!hydrated || pending}>
        Add link
      </button>
      <ErrorLine error={error} testId="issue-link-error" />
    </form>
  );
}
