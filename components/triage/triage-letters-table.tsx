"use client";

import Link from "@/components/ui/link";
import { useState } from "react";
import { RelativeTime } from "@/components/ui/relative-time";
import { LetterWhen } from "@/components/triage/letter-when";
import { formatBytes, truncate } from "@/lib/format";
import { letterHref } from "@/lib/dlq/links";
import { newRedriveQuery } from "@/lib/redrive/ui-format";
import type { IndexedLetter } from "@/lib/triage/queries";
import { DispositionBadge } from "./disposition-badge";
import { EmptyRow } from "@/components/ui/empty-row";
import { ROW, ROW_KEYS, ROW_OPEN, RowKeys } from "@/components/ui/row-keys";

/** One keyset page of the filtered set, newest first; rows open the letter page. Gone letters say when they left. */
export function TriageLettersTable({
  connectionId,
  queue,
  letters,
  keyboard,
  backHref,
  redriveBase,
  discardBase,
}: {
  connectionId: string;
  queue: string;
  letters: IndexedLetter[];
  keyboard: boolean;
  backHref: string;
  /** The new-redrive URL (without query) when the viewer may start redrives: rows get checkboxes. */
  redriveBase?: string;
  /** The new-discard URL (without query) when the viewer may discard (admins): rows get checkboxes. */
  discardBase?: string;
}) {
  const [picked, setPicked] = useState<string[]>([]);
  const pickable = letters.filter((l) => !l.goneAt).map((l) => l.letterId);
  const allPicked = pickable.length > 0 && pickable.every((id) => picked.includes(id));
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const pick = Boolean(redriveBase || discardBase);
  return (
    <>
      {pick ? (
        <div className="toolbar pick-bar" data-testid="pick-bar">
          <span className="hint" data-testid="picked-count">
            {picked.length
              ? `${picked.length} ${picked.length === 1 ? "letter" : "letters"} ticked`
              : `Tick letters to ${redriveBase && discardBase ? "redrive or discard" : redriveBase ? "redrive" : "discard"} just those.`}
          </span>
          {picked.length ? (
            <>
              {redriveBase ? (
                <Link
                  className="btn btn-small"
                  href={`${redriveBase}${newRedriveQuery({ letterIds: picked })}`}
                  data-testid="redrive-selected"
                >
                  Redrive selected ({picked.length})…
                </Link>
              ) : null}
              {discardBase ? (
                <Link
                  className="btn btn-small btn-danger"
                  href={`${discardBase}${newRedriveQuery({ letterIds: picked })}`}
                  data-testid="discard-selected"
                >
                  Discard selected ({picked.length})…
                </Link>
              ) : null}
              <button type="button" className="btn btn-small btn-quiet" onClick={() => setPicked([])}>
                Clear
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {keyboard ? <RowKeys searchId="triage-q" backHref={backHref} /> : null}
      <div className="table-wrap scroll letters-wrap">
        <table className="grid" data-testid="triage-letters" {...(keyboard ? ROW_KEYS : {})}>
          <thead>
            <tr>
              {pick ? (
                <th className="pick">
                  <input
                    type="checkbox"
                    aria-label="Tick every letter on this page"
                    checked={allPicked}
                    onChange={() =>
                      setPicked(
                        allPicked
                          ? picked.filter((id) => !pickable.includes(id))
                          : [...new Set([...picked, ...pickable])],
                      )
                    }
                    data-testid="pick-all"
                  />
                </th>
              ) : null}
              <th>When</th>
              <th>Exception or reason</th>
              <th>Disposition</th>
              <th>Origin</th>
              <th className="num">Size</th>
              <th>Letter</th>
            </tr>
          </thead>
          <tbody>
            {letters.map((l) => {
              const href = letterHref(connectionId, queue, l.letterId);
              const exception = [l.exceptionClass, l.exceptionMessage].filter(Boolean).join(": ");
              return (
                <tr
                  key={l.letterId}
                  {...ROW}
                  data-testid="triage-letter-row"
                  data-letter-id={l.letterId}
                  data-gone={l.goneAt ? "1" : undefined}
                  className={l.goneAt ? "is-gone" : undefined}
                >
                  {pick ? (
                    // biome-ignore lint/a11y/useKeyWithClickEvents: not an action: stops a tick (mouse or Space on the checkbox) from also selecting the row
                    <td className="pick" onClick={(e) => e.stopPropagation()}>
                      {l.goneAt ? null : (
                        <input
                          type="checkbox"
                          aria-label={`Tick letter ${l.letterId}`}
                          checked={picked.includes(l.letterId)}
                          onChange={() => toggle(l.letterId)}
                          data-testid="pick-letter"
                        />
                      )}
                    </td>
                  ) : null}
                  <td className="nowrap" data-testid="triage-letter-when">
                    <LetterWhen letter={l} />
                  </td>
                  <td className="truncate" title={exception || l.reason || undefined} style={{ maxWidth: 460 }}>
                    {exception ? (
                      truncate(exception, 110)
                    ) : l.reason ? (
                      <span className="badge badge-info">{l.reason}</span>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                  <td>
                    <DispositionBadge disposition={l.disposition} ruleId={l.ruleId} />
                  </td>
                  <td className="mono wrap-anywhere small">{l.originQueue ?? <span className="muted">—</span>}</td>
                  <td className="num nowrap">{formatBytes(l.bodySize)}</td>
                  <td className="mono nowrap" title={l.letterId}>
                    {l.goneAt ? (
                      <>
                        <span className="muted">{truncate(l.letterId, 24)}</span>{" "}
                        <span className="badge" data-testid="gone-badge">
                          gone <RelativeTime value={l.goneAt} />
                        </span>
                      </>
                    ) : (
                      <Link href={href} data-testid="triage-letter-link" {...ROW_OPEN}>
                        {truncate(l.letterId, 28)}
                      </Link>
                    )}
                  </td>
                </tr>
              );
            })}
            <EmptyRow show={letters.length === 0} columns={pick ? 7 : 6}>
              No letter in the index matches these filters.
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
