"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, useTransition, type FormEvent } from "react";
import { planDiscardAction, startDiscardAction } from "@/app/dlqs/[connectionId]/[queue]/discard/actions";
import type { DiscardPreview } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { describeScope, letters, type UiSelection } from "@/lib/redrive/ui-format";

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
}: {
  connectionId: string;
  queue: string;
  selection: UiSelection;
  initial: DiscardPreview;
  groupLabel: string | null;
  retentionDays: number;
  backHref: string;
}) {
  const router = useRouter();
  const [preview, setPreview] = useState(initial);
  const [reason, setReason] = useState("");
  const [confirmed, setConfirmed] = useState(false);
  const [error, setError] = useState<{ message: string; stale: boolean } | null>(null);
  const [pending, start] = useTransition();
  const count = preview.count;
  const phrase = `Discard ${letters(count)}`;
  const ready = count > 0 && reason.trim().length >= 3 && confirmed;

  const recount = () => {
    setError(null);
    start(async () => {
      const r = await planDiscardAction({ connectionId, queue, selection });
      if (!r.ok) return setError({ message: r.error.message, stale: false });
      setPreview(r.data);
      setConfirmed(false);
    });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!ready) return;
    setError(null);
    start(async () => {
      const r = await startDiscardAction({ connectionId, queue, selection, reason: reason.trim(), confirmedCount: count });
      if (!r.ok) {
        setError({ message: r.error.message, stale: r.error.code === "conflict:count" });
        if (r.error.code === "conflict:count") setConfirmed(false);
        return;
      }
      router.push(discardJobHref(connectionId, queue, r.data.id));
    });
  };

  return (
    <form className="redrive-form" onSubmit={submit} data-testid="discard-form" noValidate>
      <section className="card redrive-scope" aria-label="Scope">
        <div className="hint">You are about to discard</div>
        <p className="redrive-scope-text" data-testid="discard-scope" data-count={count}>
          <strong>{describeScope(selection, count, queue, groupLabel)}</strong>
        </p>
        <p className="hint">
          Counted in the triage index just now.{" "}
          <button type="button" className="btn btn-small btn-quiet" onClick={recount} disabled={pending} data-testid="discard-recount">
            Count again
          </button>{" "}
          <Link href={backHref}>← Back</Link>
        </p>
        <p className="hint">
          Each letter is copied into the console&apos;s archive (payload encrypted) before it leaves the DLQ, kept for {retentionDays} days, and can be exported or put back
          (undo) from the archive by an admin.
        </p>
        {preview.warnings.map((w) => (
          <div key={w} className="banner banner-warn" data-testid="discard-warning">
            {w}
          </div>
        ))}
      </section>

      <fieldset className="card">
        <legend>Why are these letters discarded?</legend>
        <label>
          <span className="hint">Required. Recorded with the discard, on every archived letter and in the audit log.</span>
          <textarea value={reason} onChange={(e) => setReason(e.target.value)} rows={2} maxLength={2000} required placeholder="Orders for the retired v1 checkout; they can never be processed (ORD-931)" data-testid="discard-reason" />
        </label>
      </fieldset>

      <section className="card redrive-confirm" aria-label="Confirm">
        <label className="radio">
          <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} disabled={count === 0} data-testid="discard-confirm" />
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
            title={ready ? undefined : count === 0 ? "Nothing to discard." : reason.trim().length < 3 ? "State the reason first." : "Tick the confirmation first."}
          >
            {pending ? "Starting…" : phrase}
          </button>
          <Link href={backHref} className="btn btn-quiet">
            Cancel
          </Link>
        </div>
        {error ? (
          <div className="form-error" role="alert" data-testid="discard-error">
            {error.message}{" "}
            {error.stale ? (
              <button type="button" className="btn btn-small" onClick={recount} disabled={pending} data-testid="discard-replan">
                Count again and review
              </button>
            ) : null}
          </div>
        ) : null}
      </section>
    </form>
  );
}
