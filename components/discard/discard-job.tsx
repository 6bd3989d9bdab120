"use client";

import Link from "@/components/ui/link";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, useTransition } from "react";
import { cancelDiscardAction } from "@/app/dlqs/[connectionId]/[queue]/discard/actions";
import { EndedNote, fetchJobPage, JobErrors, JobFacts, JobHeader, JobProgress } from "@/components/jobs/operation-job";
import { RelativeTime } from "@/components/ui/relative-time";
import { archiveHref } from "@/lib/archive/params";
import type { getDiscard } from "@/lib/discard/use-cases";
import { discardJobHref } from "@/lib/discard/ui-links";
import { formatCount, truncate } from "@/lib/format";
import { describeScope, isActive, type UiSelection } from "@/lib/redrive/ui-format";
import { discardKeys } from "./query-keys";
import { EmptyRow } from "@/components/ui/empty-row";
import { jobEnded, leftWords, resultOf } from "@/lib/jobs/accounting";

type Data = Awaited<ReturnType<typeof getDiscard>>;

const LEDGER_WORDS: Record<string, string> = {
  pending: "waiting (in the DLQ)",
  removing: "being archived",
  discarded: "discarded (archived)",
  failed: "failed (still in the DLQ)",
  missing: "not found in the DLQ",
  checksum_mismatch: "changed since indexed (still in the DLQ)",
};

/** A ledger row's state in words; once the discard ended, a letter it never reached is still in the DLQ, not waiting. */
function discardLedgerWords(state: string, jobState: string): string {
  if (jobEnded(jobState) && (state === "pending" || state === "removing")) return leftWords("discard", jobState);
  return LEDGER_WORDS[state] ?? state;
}

/** A discard's live view, polled every second while it is active: progress with numbers, cancel, and the per-letter ledger. */
export function DiscardJob({
  initial,
  ledgerState,
  after,
  canCancel,
  groupLabel,
}: {
  initial: Data;
  ledgerState: string | null;
  after: number | null;
  canCancel: boolean;
  groupLabel: string | null;
}) {
  const id = initial.discard.id;
  const qc = useQueryClient();
  const query = useQuery({
    queryKey: discardKeys.page(id, ledgerState, after),
    queryFn: () => fetchJobPage<Data>("discard", id, ledgerState, after),
    initialData: initial,
    refetchInterval: (q) => (isActive(q.state.data?.discard.state ?? "") ? 1000 : false),
    staleTime: 0,
  });
  const { discard: d, counts, ledger, nextAfter } = query.data;
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const active = isActive(d.state);
  const settled = counts.discarded + counts.failed + counts.missing + counts.checksum_mismatch;
  const fraction = d.total ? settled / d.total : 1;
  const rate = Number((d.progress as { rate?: number }).rate ?? 0);
  const eta = (d.progress as { eta?: number | null }).eta ?? null;
  const href = (state: string | null, a: number | null = null) =>
    discardJobHref(d.connectionId, d.queue, d.id, { state, after: a });

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
      <JobHeader
        kind="discard"
        id={d.id}
        state={d.state}
        result={resultOf(d.progress)}
        cancelRequested={d.cancelRequested}
        scope={describeScope(d.selection as UiSelection, d.total, d.queue, groupLabel)}
        scopeTestId="discard-job-scope"
      />
      {d.state === "failed" ? (
        <div className="banner banner-danger" role="alert">
          <strong>The discard failed:</strong> {d.error ?? "no reason was recorded"} Letters not yet discarded are still
          in the DLQ; the ledger below shows each one.
        </div>
      ) : null}

      <JobProgress
        kind="discard"
        state={d.state}
        settled={settled}
        total={d.total}
        fraction={fraction}
        rate={rate}
        eta={eta}
        numberPrefix="dn"
        numbers={[
          ["discarded", "Discarded", counts.discarded, ""],
          [
            "failed",
            "Failed",
            counts.failed + counts.checksum_mismatch,
            counts.failed + counts.checksum_mismatch ? "is-bad" : "",
          ],
          ["missing", "Missing", counts.missing, counts.missing ? "is-warn" : ""],
          ["pending", active ? "Waiting" : "Not discarded, still in the DLQ", counts.pending + counts.removing, ""],
        ]}
      />

      <div className="toolbar redrive-controls">
        {canCancel ? (
          <button
            type="button"
            className="btn btn-danger"
            onClick={cancel}
            disabled={!active || d.cancelRequested || pending}
            data-testid="discard-cancel"
          >
            Cancel discard
          </button>
        ) : null}
        <span className="hint">
          {active
            ? "Cancel stops at the next batch; letters not yet discarded stay in the DLQ, untouched."
            : "This discard has ended."}
          <EndedNote state={d.state} finishedAt={d.finishedAt} />
        </span>
        <span className="spacer" />
        {counts.discarded > 0 ? (
          <Link
            className="btn btn-small"
            href={archiveHref({ connectionId: d.connectionId, queue: d.queue })}
            data-testid="discard-archive-link"
          >
            Open in the archive →
          </Link>
        ) : null}
      </div>
      <JobErrors kind="discard" action={error} polling={query.error} />

      <JobFacts
        rows={[
          { label: "Reason", value: d.reason, testId: "discard-job-reason" },
          {
            label: "Started by",
            value: (
              <>
                {d.createdBy ?? "—"} · <RelativeTime value={d.createdAt} />
              </>
            ),
          },
        ]}
      />

      <section className="section" aria-label="Ledger">
        <div className="toolbar">
          <h2 style={{ margin: 0 }}>Letters</h2>
          <Link href={href(null)} className={`chip${ledgerState ? "" : " is-current"}`}>
            all {formatCount(d.total)}
          </Link>
          {Object.entries(counts)
            .filter(([, n]) => n > 0)
            .map(([s, n]) => (
              <Link
                key={s}
                href={href(s)}
                className={`chip${ledgerState === s ? " is-current" : ""}`}
                data-testid={`discard-filter-${s}`}
              >
                {s === "pending" || s === "removing" ? discardLedgerWords(s, d.state) : s.replace("_", " ")}{" "}
                {formatCount(n)}
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
                    <span
                      className={`badge ${r.state === "discarded" ? "badge-ok" : r.state === "pending" || r.state === "removing" ? "" : "badge-danger"}`}
                    >
                      {discardLedgerWords(r.state, d.state)}
                    </span>
                  </td>
                  <td className="wrap-anywhere small">{r.reason ?? <span className="muted">—</span>}</td>
                  <td className="nowrap">
                    <RelativeTime value={r.discardedAt ?? r.updatedAt} />
                  </td>
                </tr>
              ))}
              <EmptyRow show={ledger.length === 0} columns={5}>
                No letter in this state.
              </EmptyRow>
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
