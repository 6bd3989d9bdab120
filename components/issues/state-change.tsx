"use client";

import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { changeIssueStateAction, changeIssueStatesAction } from "@/app/failures/actions";
import { useHydrated } from "@/components/ui/use-hydrated";
import type { ActionResult } from "@/lib/errors";
import type { StateChangeInput } from "@/lib/issues/inputs";
import styles from "./issues.module.css";

/** How long an ignore lasts: for a time from now, until N more letters, or for good. */
const IGNORE_FOR = [
  { value: "1h", label: "for 1 hour", ms: 3_600_000 },
  { value: "24h", label: "for 24 hours", ms: 86_400_000 },
  { value: "7d", label: "for 7 days", ms: 7 * 86_400_000 },
  { value: "count", label: "until N more letters" },
  { value: "forever", label: "for good" },
] as const;

type IgnoreFor = (typeof IGNORE_FOR)[number]["value"];

function ignoreChange(choice: IgnoreFor, letters: number): StateChangeInput {
  if (choice === "forever") return { state: "ignored", ignore: { mode: "forever" } };
  if (choice === "count") return { state: "ignored", ignore: { mode: "until_count", letters } };
  const ms = IGNORE_FOR.find((o) => o.value === choice && "ms" in o) as { ms: number };
  return { state: "ignored", ignore: { mode: "until_time", until: new Date(Date.now() + ms.ms) } };
}

/**
 * Acknowledge, resolve (with an optional note such as "in the next release") or ignore: the
 * controls one group's page and the failures list (for its whole filtered set) share. The server
 * checks the role and audits; the page refreshes to show the new state.
 */
function StateControls({
  apply,
  scope,
  testId,
  done,
}: {
  apply: (change: StateChangeInput) => Promise<ActionResult<unknown>>;
  /** "this group" or "the 12 groups listed". */
  scope: string;
  testId: string;
  done?: (data: unknown) => string | null;
}) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [ignoreFor, setIgnoreFor] = useState<IgnoreFor>("24h");
  const [letters, setLetters] = useState(100);
  const run = (change: StateChangeInput) =>
    start(async () => {
      setError(null);
      setSaid(null);
      const r = await apply(change);
      if (!r.ok) setError(r.error.message);
      else {
        setSaid(done?.(r.data) ?? null);
        router.refresh();
      }
    });
  const disabled = !hydrated || pending;
  return (
    <div className={styles.actions} data-testid={testId}>
      <button
        type="button"
        className="btn btn-small"
        data-testid="issue-acknowledge"
        disabled={disabled}
        title={`Say you know about ${scope}: it leaves "needs attention" and stays open`}
        onClick={() => run({ state: "acknowledged" })}
      >
        Acknowledge
      </button>
      <span className={styles.group}>
        <label className="sr-only" htmlFor={`${testId}-note`}>
          Resolve note
        </label>
        <input
          id={`${testId}-note`}
          className={styles.note}
          data-testid="issue-resolve-note"
          placeholder="note, e.g. in the next release"
          maxLength={500}
          value={note}
          onChange={(e) => setNote(e.target.value)}
        />
        <button
          type="button"
          className="btn btn-small"
          data-testid="issue-resolve"
          disabled={disabled}
          title={`Mark ${scope} fixed: a letter that fails the same way afterwards reopens it as regressed`}
          onClick={() => run({ state: "resolved", note: note.trim() || null })}
        >
          Resolve
        </button>
      </span>
      <span className={styles.group}>
        <label className="sr-only" htmlFor={`${testId}-ignore-for`}>
          Ignore for how long
        </label>
        <select
          id={`${testId}-ignore-for`}
          data-testid="issue-ignore-for"
          value={ignoreFor}
          onChange={(e) => setIgnoreFor(e.target.value as IgnoreFor)}
        >
          {IGNORE_FOR.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        {ignoreFor === "count" ? (
          <>
            <label className="sr-only" htmlFor={`${testId}-ignore-letters`}>
              More letters before it alerts again
            </label>
            <input
              id={`${testId}-ignore-letters`}
              type="number"
              min={1}
              className={styles.letters}
              data-testid="issue-ignore-letters"
              value={letters}
              onChange={(e) => setLetters(Number(e.target.value))}
            />
          </>
        ) : null}
        <button
          type="button"
          className="btn btn-small btn-quiet"
          data-testid="issue-ignore"
          disabled={disabled}
          title={`Silence ${scope}: no alert while ignored; it comes back as regressed when the ignore ends with new letters`}
          onClick={() => run(ignoreChange(ignoreFor, letters))}
        >
          Ignore
        </button>
      </span>
      {pending ? <span className="hint">Saving…</span> : null}
      {said ? (
        <span className="hint" role="status" data-testid={`${testId}-done`}>
          {said}
        </span>
      ) : null}
      {error ? (
        <span className="form-error" role="alert" data-testid={`${testId}-error`}>
          {error}
        </span>
      ) : null}
    </div>
  );
}

/** The state controls of one group. */
export function IssueStateControls(ref: { connectionId: string; queue: string; groupKey: string }) {
  return (
    <StateControls
      testId="issue-state-controls"
      scope="this group"
      apply={(change) => changeIssueStateAction({ ...ref, change })}
    />
  );
}

/** The state controls of every group the list's filter matches (the server takes the filter, not the rows). */
export function BulkStateControls({ filter, count }: { filter: Record<string, unknown>; count: number }) {
  return (
    <StateControls
      testId="issues-bulk"
      scope={`the ${count} group${count === 1 ? "" : "s"} this filter matches`}
      apply={(change) => changeIssueStatesAction({ filter, change })}
      done={(d) => {
        const r = d as { matched: number; changed: number };
        return `${r.changed} of ${r.matched} group${r.matched === 1 ? "" : "s"} changed.`;
      }}
    />
  );
}
