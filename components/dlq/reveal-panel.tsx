"use client";

import { useState, useTransition } from "react";
import { revealPayloadAction } from "@/app/dlqs/[connectionId]/[queue]/letters/[letterId]/actions";
import { EntriesTable } from "@/components/dlq/entries-table";
import type { RevealedLetter } from "@/lib/dlq/reveal-payload";

/**
 * "Reveal unmasked" for roles with payload:reveal: asks for a reason, then shows the unmasked
 * payload and headers from the server action's answer. Held in this component's state only, so
 * navigation or a reload forgets it; every reveal is a new audited request.
 */
export function RevealPanel({
  connectionId,
  queue,
  letterId,
  maskedCount,
}: {
  connectionId: string;
  queue: string;
  letterId: string;
  maskedCount: number;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [revealed, setRevealed] = useState<RevealedLetter | null>(null);
  const [pending, start] = useTransition();

  const submit = (e: React.FormEvent) => {
    e.preventDefault();
    setError(null);
    start(async () => {
      const r = await revealPayloadAction({ connectionId, queue, letterId, reason });
      if (!r.ok) setError(r.error.message);
      else {
        setRevealed(r.data);
        setReason("");
      }
    });
  };

  if (revealed) {
    return (
      <section className="card section" data-testid="revealed">
        <div className="card-head">
          <h2>Unmasked (revealed for this view)</h2>
          <span className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => setRevealed(null)} data-testid="reveal-hide">
            Hide again
          </button>
        </div>
        <p className="banner banner-warn">
          This reveal is recorded in the audit log with your reason. It is not kept: leaving or reloading the page masks
          it again.
        </p>
        {revealed.payload.note ? <p className="banner banner-warn">{revealed.payload.note}</p> : null}
        <pre
          className={`block${revealed.payload.kind === "text" ? " wrap" : ""}`}
          data-testid="revealed-payload"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long payload
          tabIndex={0}
        >
          {revealed.payload.text}
        </pre>
        {revealed.failure.exceptionMessage ? (
          <p>
            Exception message: <span data-testid="revealed-exception">{revealed.failure.exceptionMessage}</span>
          </p>
        ) : null}
        <EntriesTable
          title="Properties (unmasked)"
          entries={revealed.properties}
          testId="revealed-properties"
          rowTestId="revealed-property-row"
        />
        <EntriesTable
          title="Headers (unmasked)"
          entries={revealed.headers}
          testId="revealed-headers"
          rowTestId="revealed-header-row"
        />
      </section>
    );
  }

  return (
    <section className="card section" data-testid="reveal">
      <div className="card-head">
        <h2>Masked values</h2>
        <span className="muted">
          {maskedCount} value{maskedCount === 1 ? "" : "s"} masked on this page
        </span>
        <span className="spacer" />
        {!open ? (
          <button type="button" className="btn btn-small" onClick={() => setOpen(true)} data-testid="reveal-open">
            Reveal unmasked
          </button>
        ) : null}
      </div>
      {open ? (
        <form onSubmit={submit} data-testid="reveal-form">
          <label htmlFor="reveal-reason">Why do you need the unmasked payload? (recorded in the audit log)</label>
          <textarea
            id="reveal-reason"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            required
            minLength={10}
            maxLength={500}
            rows={3}
            style={{ width: "100%" }}
            data-testid="reveal-reason"
          />
          {error ? (
            <p className="banner banner-error" role="alert" data-testid="reveal-error">
              {error}
            </p>
          ) : null}
          <div className="toolbar">
            <button type="submit" className="btn btn-primary" disabled={pending} data-testid="reveal-submit">
              {pending ? "Revealing…" : "Reveal"}
            </button>
            <button type="button" className="btn" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
