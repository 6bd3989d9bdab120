"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { restoreArchivedAction } from "@/app/archive/actions";
import { RelativeTime } from "@/components/ui/relative-time";
import { archivedLetterHref, archiveExportHref, type ArchiveParams } from "@/lib/archive/params";
import type { ArchivedSummary } from "@/lib/archive/queries";
import type { RestoreResult } from "@/lib/discard/undo";
import { formatBytes, truncate } from "@/lib/format";
import { EmptyRow } from "@/components/ui/empty-row";
import { isRepairedOriginal, repairReason, REPAIRED_PUT_BACK_WARNING } from "./repaired";
import { VisibleText } from "@/components/ui/visible-text";

const ONE_LINE = { overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" } as const;

/**
 * One page of archived letters (discarded ones and the originals of repaired ones), newest first. Admins tick letters to put them back into their DLQ
 * ("undo", with a reason); anyone who may read the archive can export the ticked ones.
 */
export function ArchiveTable({
  rows,
  raw,
  canRestore,
  canPayload,
}: {
  rows: ArchivedSummary[];
  raw: ArchiveParams;
  canRestore: boolean;
  canPayload: boolean;
}) {
  const router = useRouter();
  const [picked, setPicked] = useState<string[]>([]);
  const [reason, setReason] = useState("");
  const [result, setResult] = useState<RestoreResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const pickable = rows.filter((r) => r.restoreState !== "restored" && r.restoreState !== "restoring").map((r) => r.id);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]));
  const allPicked = pickable.length > 0 && pickable.every((id) => picked.includes(id));
  const pickedRepaired = rows.filter((r) => picked.includes(r.id) && isRepairedOriginal(r.discardReason)).length;

  const undo = () => {
    setError(null);
    setResult(null);
    start(async () => {
      const r = await restoreArchivedAction({ ids: picked, reason: reason.trim() });
      if (!r.ok) return setError(r.error.message);
      setResult(r.data);
      setPicked([]);
      setReason("");
      router.refresh();
    });
  };

  return (
    <>
      <div className="toolbar pick-bar" data-testid="archive-pick-bar">
        <span className="hint" data-testid="archive-picked">
          {picked.length
            ? `${picked.length} ${picked.length === 1 ? "letter" : "letters"} ticked`
            : canRestore
              ? "Tick letters to export or put back just those."
              : "Tick letters to export just those."}
        </span>
        {picked.length ? (
          <>
            <a
              className="btn btn-small"
              href={archiveExportHref(raw, "json", false, picked)}
              download
              data-testid="archive-export-picked"
            >
              Export ticked (JSON)
            </a>
            {canPayload ? (
              <a
                className="btn btn-small"
                href={archiveExportHref(raw, "json", true, picked)}
                download
                data-testid="archive-export-picked-payload"
              >
                + payloads
              </a>
            ) : null}
          </>
        ) : null}
      </div>
      {canRestore && picked.length ? (
        <section className="card" aria-label="Undo" data-testid="archive-undo">
          <label>
            <span className="hint">
              Put {picked.length} {picked.length === 1 ? "letter" : "letters"} back into{" "}
              {picked.length === 1 ? "its" : "their"} DLQ. Why? Recorded on each letter and in the audit log.
            </span>
            <textarea
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              rows={2}
              maxLength={2000}
              data-testid="archive-undo-reason"
            />
          </label>
          {pickedRepaired ? (
            <p className="banner banner-warn" data-testid="archive-undo-repaired">
              {picked.length === 1
                ? REPAIRED_PUT_BACK_WARNING
                : `${pickedRepaired} of the ticked letters ${pickedRepaired === 1 ? "was" : "were"} repaired and resubmitted; putting ${pickedRepaired === 1 ? "its original" : "their originals"} back makes a second copy in the DLQ.`}
            </p>
          ) : null}
          <div className="toolbar">
            <button
              type="button"
              className="btn btn-primary"
              onClick={undo}
              disabled={pending || reason.trim().length < 3}
              data-testid="archive-undo-submit"
            >
              {pending ? "Putting back…" : `Put back ${picked.length} ${picked.length === 1 ? "letter" : "letters"}`}
            </button>
          </div>
        </section>
      ) : null}
      {error ? (
        <p className="form-error" role="alert" data-testid="archive-undo-error">
          {error}
        </p>
      ) : null}
      {result ? (
        <div
          className={`banner ${result.failed ? "banner-warn" : "banner-info"}`}
          role="status"
          data-testid="archive-undo-result"
        >
          Put back {result.restored}; failed {result.failed}; skipped {result.skipped}.
          {result.outcomes
            .filter((o) => o.outcome !== "restored")
            .slice(0, 5)
            .map((o) => (
              <div key={o.id} className="small">
                <span className="mono">{truncate(o.letterId || o.id, 32)}</span>: {o.reason}
              </div>
            ))}
        </div>
      ) : null}
      <div className="table-wrap scroll">
        <table className="grid" data-testid="archive-table">
          <thead>
            <tr>
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
                  data-testid="archive-pick-all"
                />
              </th>
              <th>Discarded</th>
              <th>DLQ</th>
              <th>Letter</th>
              <th>Exception or reason</th>
              <th>By</th>
              <th>Why</th>
              <th className="num">Size</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={r.id}
                data-testid="archive-row"
                data-archive-id={r.id}
                data-letter-id={r.letterId}
                data-connection={r.connectionId}
                data-queue={r.queue}
                data-state={r.restoreState ?? "archived"}
              >
                <td className="pick">
                  {pickable.includes(r.id) ? (
                    <input
                      type="checkbox"
                      aria-label={`Tick archived letter ${r.letterId}`}
                      checked={picked.includes(r.id)}
                      onChange={() => toggle(r.id)}
                      data-testid="archive-pick"
                    />
                  ) : null}
                </td>
                <td className="nowrap">
                  <RelativeTime value={r.discardedAt} />
                </td>
                <td className="small" style={{ maxWidth: 240 }}>
                  <div className="mono" style={ONE_LINE} title={r.queue}>
                    <VisibleText text={r.queue} />
                  </div>
                  <div className="muted" style={ONE_LINE}>
                    {r.connectionId}
                  </div>
                </td>
                <td className="mono nowrap" title={r.letterId}>
                  <Link href={archivedLetterHref(r.id)} data-testid="archive-letter-link">
                    {truncate(r.letterId, 28)}
                  </Link>
                </td>
                <td
                  className="truncate"
                  style={{ maxWidth: 260 }}
                  title={r.exceptionClass ?? r.failureReason ?? undefined}
                >
                  {r.exceptionClass ?? r.failureReason ?? <span className="muted">—</span>}
                </td>
                <td className="small">{r.discardedBy ?? "—"}</td>
                <td className="truncate small" style={{ maxWidth: 260 }} title={r.discardReason}>
                  {isRepairedOriginal(r.discardReason) ? (
                    <>
                      <span
                        className="badge badge-info"
                        title="The original of a repaired letter: the repaired copy was sent on"
                        data-testid="archive-repaired"
                      >
                        repaired
                      </span>{" "}
                      {truncate(repairReason(r.discardReason), 72)}
                    </>
                  ) : (
                    truncate(r.discardReason, 80)
                  )}
                </td>
                <td className="num nowrap">{formatBytes(r.bodySize)}</td>
                <td className="nowrap">
                  {r.restoreState === "restored" ? (
                    <span
                      className="badge badge-ok"
                      title={`by ${r.restoredBy ?? "?"}: ${r.restoreReason ?? ""}`}
                      data-testid="archive-restored"
                    >
                      put back <RelativeTime value={r.restoredAt} />
                    </span>
                  ) : r.restoreState === "restoring" ? (
                    <span className="badge badge-info">putting back…</span>
                  ) : r.restoreState === "failed" ? (
                    <span className="badge badge-danger" title={r.restoreError ?? undefined}>
                      undo failed
                    </span>
                  ) : (
                    <span className="badge">archived</span>
                  )}
                </td>
              </tr>
            ))}
            <EmptyRow show={rows.length === 0} columns={9}>
              No archived letter matches these filters.
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
