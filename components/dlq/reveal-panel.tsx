"use client";

import { useState, useTransition } from "react";
import { revealPayloadAction } from "@/app/dlqs/[connectionId]/[queue]/letters/[letterId]/actions";
import { EntriesTable } from "@/components/dlq/entries-table";
import { VisibleText } from "@/components/ui/visible-text";
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import type { RevealedLetter } from "@/lib/dlq/reveal-payload";
import { valueText } from "@/lib/text";
import { HexView } from "./hex-view";

/** The revealed entries that the page shows masked (same position, different text): what the reveal adds. */
function maskedOnly(revealed: HeaderEntry[], shown: HeaderEntry[]): HeaderEntry[] {
  return revealed.filter((e, i) => shown[i] === undefined || valueText(shown[i].value) !== valueText(e.value));
}

/**
 * "Reveal unmasked" for roles with payload:reveal, inside the payload's card: asks for a reason,
 * then shows the unmasked payload and, of the headers, properties and exception message, only
 * those the page shows masked. Held in this component's state only, so navigation or a reload
 * forgets it; every reveal is a new audited request.
 */
export function RevealPanel({
  connectionId,
  queue,
  letterId,
  maskedCount,
  size,
  shown,
}: {
  connectionId: string;
  queue: string;
  letterId: string;
  maskedCount: number;
  /** The whole payload's size in bytes. */
  size: number;
  /** What the page shows (masked), to tell which revealed values were masked. */
  shown: { headers: HeaderEntry[]; properties: HeaderEntry[]; exceptionMessage: string | null };
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
    const p = revealed.payload;
    const headers = maskedOnly(revealed.headers, shown.headers);
    const properties = maskedOnly(revealed.properties, shown.properties);
    const exception =
      revealed.failure.exceptionMessage !== null && revealed.failure.exceptionMessage !== shown.exceptionMessage
        ? revealed.failure.exceptionMessage
        : null;
    return (
      <div className="reveal" data-testid="revealed">
        <div className="card-head">
          <h3>Unmasked payload (revealed for this view)</h3>
          <span className="spacer" />
          <button type="button" className="btn btn-small" onClick={() => setRevealed(null)} data-testid="reveal-hide">
            Hide again
          </button>
        </div>
        <p className="banner banner-warn">
          This reveal is recorded in the audit log with your reason. It is not kept: leaving or reloading the page masks
          it again.
        </p>
        {p.note ? <p className="banner banner-warn">{p.note}</p> : null}
        {p.kind === "hex" ? (
          <div data-testid="revealed-payload" data-kind="hex">
            <HexView base64={p.base64} maskedRanges={p.maskedRanges} size={size} testId="revealed-hex" />
          </div>
        ) : (
          <pre
            className={`block${p.kind === "text" ? " wrap" : ""}`}
            data-testid="revealed-payload"
            data-kind={p.kind}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container; tabIndex lets keyboard users focus and scroll a long payload
            tabIndex={0}
          >
            <VisibleText text={p.text} />
          </pre>
        )}
        {exception ? (
          <p>
            Exception message (unmasked):{" "}
            <span data-testid="revealed-exception">
              <VisibleText text={exception} />
            </span>
          </p>
        ) : null}
        {properties.length ? (
          <EntriesTable
            title="Masked properties, unmasked"
            entries={properties}
            testId="revealed-properties"
            rowTestId="revealed-property-row"
          />
        ) : null}
        {headers.length ? (
          <EntriesTable
            title="Masked headers, unmasked"
            entries={headers}
            testId="revealed-headers"
            rowTestId="revealed-header-row"
          />
        ) : null}
      </div>
    );
  }

  return (
    <div className="reveal" data-testid="reveal">
      <div className="toolbar">
        <span className="muted">
          {maskedCount} value{maskedCount === 1 ? "" : "s"} masked on this page (payload, headers, exception).
        </span>
        <span className="spacer" />
        {!open ? (
          <button type="button" className="btn btn-small" onClick={() => setOpen(true)} data-testid="reveal-open">
            Reveal unmasked…
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
    </div>
  );
}
