"use client";

import Link from "next/link";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { cancelDiscardAction } from "@/app/dlqs/[connectionId]/[queue]/discard/actions";
import { RelativeTime } from "@/components/ui/relative-time";
import { archiveHref } from "@/lib/archive/params";
import type { getDiscard } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { formatCount, truncate } from "@/lib/format";
import { describeScope, formatDuration, STATE_BADGE, STATE_WORDS, type UiSelection } from "@/lib/redrive/ui-format";
import { discardKeys } from "./query-keys";

type Data = Awaited<ReturnType<typeof getDiscard>>;

const ACTIVE = ["queued", "running", "cancelling", "paused"];
const LEDGER_WORDS: Record<string, string> = {
  pending: "waiting (in the DLQ)",
  removing: "being archived",
  discarded: "discarded (archived)",
  failed: "failed (still in the DLQ)",
  missing: "not found in the DLQ",
  checksum_mismatch: "changed since indexed (still in the DLQ)",
};

async function fetchDiscard(id: string, state: string | null, after: number | null): Promise<Data> {
  const q = new URLSearchParams({ limit: "50" });
  if (state) q.set("state", state);
  if (after) q.set("after", String(after));
  const res = await fetch(`/api/discard/${encodeURIComponent(id)}?${q}`, { cache: "no-store" });
  const body = (await res.json().catch(() => null)) as { ok: boolean; data?: Data; error?: { message: string } } | null;
  if (!res.ok || !body?.ok || !body.data) throw new Error(body?.error?.message ?? `The discard's progress could not be read (HTTP ${res.status}). Retrying.`);
  return body.data;
}

/** A discard's live view, polled every second while it is active: progress with numbers, cancel, and the per-letter ledger. */
export function DiscardJob({ initial, ledgerState, after, canCancel, groupLabel }: { initial: Data; ledgerState: string | null; after: number | null; canCancel: boolean; groupLabel: string | null }) {
  const id = initial.discard.id;
  const qc = useQueryClient();
  const query = useQuery({
    queryKey: discardKeys.page(id, ledgerState, after),
    queryFn: () => fetchDiscard(id, ledgerState, after),
    initialData: initial,
    refetchInterval: (q) => (ACTIVE.includes(q.state.data?.discard.state ?? "") ? 1000 : false),
    staleTime: 0,
  });
  const { discard: d, counts, ledger, nextAfter } = query.data;
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const active = ACTIVE.includes(d.state);
  const settled = counts.discarded + counts.failed + counts.missing + counts.checksum_mismatch;
  const fraction = d.total ? settled / d.total : 1;
  const pct = Math.round(fraction * 1000) / 10;
  const rate = Number((d.progress as { rate?: number }).rate ?? 0);
  const eta = (d.progress as { eta?: number | null }).eta ?? null;
  const href = (state: string | null, a: number | null = null) => discardJobHref(d.connectionId, d.queue, d.id, { state, after: a });

  const cancel = () => {
    setError(null);
    start(async () => {
      const r = await cancelDiscardAction({ jobId: d.id });
      if (!r.ok) setError(r.error.message);
      await qc.invalidateQueries({ queryKey: discardKeys.job(id) });
    });
  };

  return (
    <div className="redrive-job" data-testid="discard-job" data-state={d.state}>
      <div className="page-head">
        <h1>
          Discard <span className="mono">{d.id.slice(0, 8)}</span>
        </h1>
        <span className={`badge ${STATE_BADGE[d.state] ?? ""}`} data-testid="discard-state">
          {STATE_WORDS[d.state] ?? d.state}
          {d.cancelRequested && active ? " · cancelling" : ""}
        </span>
        <span className="meta" data-testid="discard-job-scope">
          {describeScope(d.selection as UiSelection, d.total, d.queue, groupLabel)}
        </span>
      </div>
      {d.state === "failed" ? (
        <div className="banner banner-danger" role="alert">
          <strong>The discard failed:</strong> {d.error ?? "no reason was recorded"} Letters not yet discarded are still in the DLQ; the ledger below shows each one.
        </div>
      ) : null}

      <section className="card redrive-progress" aria-label="Progress" data-testid="discard-progress" data-fraction={fraction}>
        <div className="scan-progress-head">
          <strong data-testid="discard-settled">
            {formatCount(settled)} of {formatCount(d.total)} letters handled ({pct}%)
          </strong>
          <span className="spacer" />
          <span className="hint">rate {rate ? `${formatCount(rate)}/s` : "—"}</span>
          <span className="hint">ETA {d.state === "running" && eta !== null ? formatDuration(eta) : active ? "—" : "done"}</span>
        </div>
        <div className="progress progress-lg" role="progressbar" aria-label="Discard progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(fraction * 100)}>
          <div className="progress-fill" style={{ width: `${fraction * 100}%` }} />
        </div>
        <dl className="redrive-numbers">
          {(
            [
              ["discarded", "Discarded", counts.discarded, ""],
              ["failed", "Failed", counts.failed + counts.checksum_mismatch, counts.failed + counts.checksum_mismatch ? "is-bad" : ""],
              ["missing", "Missing", counts.missing, counts.missing ? "is-warn" : ""],
              ["pending", "Waiting", counts.pending + counts.removing, ""],
            ] as const
          ).map(([key, label, value, cls]) => (
            <div key={key} className={cls} data-testid={`dn-${key}`} data-value={value}>
              <dt>{label}</dt>
              <dd>{formatCount(value)}</dd>
            </div>
          ))}
        </dl>
      </section>

      <div className="toolbar redrive-controls">
        {canCancel ? (
          <button type="button" className="btn btn-danger" onClick={cancel} disabled={!active || d.cancelRequested || pending} data-testid="discard-cancel">
            Cancel discard
          </button>
        ) : null}
        <span className="hint">
          {active ? "Cancel stops at the next batch; letters not yet discarded stay in the DLQ, untouched." : "This discard has ended."}
          {!active && d.finishedAt ? (
            <>
              {" "}
              Ended <RelativeTime value={d.finishedAt} />.
            </>
          ) : null}
        </span>
        <span className="spacer" />
        {counts.discarded > 0 ? (
          <Link className="btn btn-small" href={archiveHref({ connectionId: d.connectionId, queue: d.queue })} data-testid="discard-archive-link">
            Open in the archive →
          </Link>
        ) : null}
      </div>
      {error ? (
        <p className="form-error" role="alert" data-testid="discard-action-error">
          {error}
        </p>
      ) : null}
      {query.error ? <p className="form-error">{(query.error as Error).message}</p> : null}

      <section className="card redrive-facts" aria-label="Plan">
        <table className="kv">
          <tbody>
            <tr>
              <th>Reason</th>
              <td data-testid="discard-job-reason">{d.reason}</td>
            </tr>
            <tr>
              <th>Started by</th>
              <td>
                {d.createdBy ?? "—"} · <RelativeTime value={d.createdAt} />
              </td>
            </tr>
          </tbody>
        </table>
      </section>

      <section className="section" aria-label="Ledger">
        <div className="toolbar">
          <h2 style={{ margin: 0 }}>Letters</h2>
          <Link href={href(null)} className={`chip${ledgerState ? "" : " is-current"}`}>
            all {formatCount(d.total)}
          </Link>
          {Object.entries(counts)
            .filter(([, n]) => n > 0)
            .map(([s, n]) => (
              <Link key={s} href={href(s)} className={`chip${ledgerState === s ? " is-current" : ""}`} data-testid={`discard-filter-${s}`}>
                {s.replace("_", " ")} {formatCount(n)}
              </Link>
            ))}
        </div>
        <div className="table-wrap scroll">
          <table className="grid" data-testid="discard-ledger">
            <thead>
              <tr>
                <th className="num">#</th>
                <th>Letter</th>
                <th>Outcome</th>
                <th>Reason</th>
                <th>When</th>
              </tr>
            </thead>
            <tbody>
              {ledger.map((r) => (
                <tr key={r.id} data-testid="discard-ledger-row" data-state={r.state} data-letter-id={r.letterId}>
                  <td className="num">{r.seq}</td>
                  <td className="mono" title={r.letterId}>
                    {truncate(r.letterId, 32)}
                  </td>
                  <td>
                    <span className={`badge ${r.state === "discarded" ? "badge-ok" : r.state === "pending" || r.state === "removing" ? "" : "badge-danger"}`}>{LEDGER_WORDS[r.state] ?? r.state}</span>
                  </td>
                  <td className="wrap-anywhere small">{r.reason ?? <span className="muted">—</span>}</td>
                  <td className="nowrap">
                    <RelativeTime value={r.discardedAt ?? r.updatedAt} />
                  </td>
                </tr>
              ))}
              {ledger.length === 0 ? (
                <tr>
                  <td colSpan={5} className="empty">
                    No letter in this state.
                  </td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
        {nextAfter ? (
          <Link className="btn btn-small" href={href(ledgerState, nextAfter)}>
            Next →
          </Link>
        ) : null}
      </section>
    </div>
  );
}
