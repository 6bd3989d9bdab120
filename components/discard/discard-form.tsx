"use client";

import Link from "@/components/ui/link";
import { useState, type FormEvent } from "react";
import { planDiscardAction, startDiscardAction } from "@/app/dlqs/[connectionId]/[queue]/discard/actions";
import { ScopeCard, StartErrorNote, useStartForm } from "@/components/jobs/start-form";
import type { UnindexedLetter } from "@/lib/discard/plan";
import type { DiscardPreview } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { letters, type UiSelection } from "@/lib/redrive/ui-format";

/**
 * The discard form: the exact scope and count (from planDiscard), the required reason, and a
 * confirmation that repeats the count. A stale count (the set changed) offers to count again.
 */
export function DiscardForm({
  connectionId,
  queue,
  selection,
  initial,
  groupLabel,
  retentionDays,
  backHref,
  unindexed = null,
}: {
  connectionId: string;
  queue: string;
  selection: UiSelection;
  initial: DiscardPreview;
  groupLabel: string | null;
  retentionDays: number;
  backHref: string;
  /** The one letter its page read, discarded by id when the triage index does not hold it. */
  unindexed?: UnindexedLetter | null;
}) {
  const extra = unindexed ? { unindexed } : {};
  const [reason, setReason] = useState("");
  const { preview, count, confirmed, setConfirmed, error, pending, recount, start } = useStartForm(
    initial,
    () => planDiscardAction({ connectionId, queue, selection, ...extra }),
    (id) => discardJobHref(connectionId, queue, id),
  );
  const phrase = `Discard ${letters(count)}`;
  const ready = count > 0 && reason.trim().length >= 3 && confirmed;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (ready)
      start(() =>
        startDiscardAction({
          connectionId,
          queue,
          selection,
          ...extra,
          reason: reason.trim(),
          confirmedCount: count,
        }),
      );
  };

  return (
    <form className="redrive-form" onSubmit={submit} data-testid="discard-form" noValidate>
      <ScopeCard
        kind="discard"
        selection={selection}
        count={count}
        queue={queue}
        groupLabel={groupLabel}
        onRecount={recount}
        pending={pending}
        back={{ href: backHref, label: "← Back" }}
      >
        <p className="hint">
          Each letter is copied into the console&apos;s archive (payload encrypted) before it leaves the DLQ, kept for{" "}
          {retentionDays} days, and can be exported or put back (undo) from the archive by an admin.
        </p>
        {preview.warnings.map((w) => (
          <div key={w} className="banner banner-warn" data-testid="discard-warning">
            {w}
          </div>
        ))}
      </ScopeCard>

      <fieldset className="card">
        <legend>Why are these letters discarded?</legend>
        <label>
          <span className="hint">
            Required. Recorded with the discard, on every archived letter and in the audit log.
          </span>
          <textarea
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            rows={2}
            maxLength={2000}
            required
            placeholder="Orders for the retired v1 checkout; they can never be processed (ORD-931)"
            data-testid="discard-reason"
          />
        </label>
      </fieldset>

      <section className="card redrive-confirm" aria-label="Confirm">
        <label className="radio">
          <input
            type="checkbox"
            checked={confirmed}
            onChange={(e) => setConfirmed(e.target.checked)}
            disabled={count === 0}
            data-testid="discard-confirm"
          />
          <span>
            <strong>{phrase}</strong> from <span className="mono">{queue}</span>. I have checked the scope.
          </span>
        </label>
        <div className="toolbar">
          <button
            type="submit"
            className="btn btn-danger"
            disabled={!ready || pending}
            data-testid="discard-submit"
            title={
              ready
                ? undefined
                : count === 0
                  ? "Nothing to discard."
                  : reason.trim().length < 3
                    ? "State the reason first."
                    : "Tick the confirmation first."
            }
          >
            {pending ? "Starting…" : phrase}
          </button>
          <Link href={backHref} className="btn btn-quiet">
            Cancel
          </Link>
        </div>
        <StartErrorNote kind="discard" error={error} onRecount={recount} pending={pending} />
      </section>
    </form>
  );
}
