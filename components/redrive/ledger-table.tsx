"use client";

import Link from "@/components/ui/link";
import { letterHref } from "@/lib/dlq/links";
import { formatCount, formatRelative, formatUtc, truncate } from "@/lib/format";
import type { LedgerRow } from "@/lib/redrive/ledger";
import type { LedgerState } from "@/lib/redrive/plan";
import { LEDGER_WORDS, ledgerWords } from "@/lib/redrive/ui-format";
import { redriveJobHref } from "@/lib/redrive/ui-links";
import type { RedriveView } from "@/lib/redrive/use-cases";
import { EmptyRow } from "@/components/ui/empty-row";

/** Outcomes first, then letters still being worked on. */
const FILTERS: readonly LedgerState[] = [
  "moved",
  "failed",
  "missing",
  "checksum_mismatch",
  "parked",
  "returned",
  "skipped",
  "unconfirmed",
  "interrupted",
  "pending",
  "moving",
];
const BADGE: Record<LedgerState, string> = {
  moved: "badge-ok",
  failed: "badge-danger",
  checksum_mismatch: "badge-danger",
  returned: "badge-danger",
  missing: "badge-warn",
  parked: "badge-warn",
  unconfirmed: "badge-warn",
  interrupted: "badge-info",
  pending: "",
  moving: "badge-info",
  skipped: "",
};

/** A letter is still in its DLQ (so its page can open) unless it was moved, went missing (or is gone after an interrupted attempt), or was parked elsewhere. */
function stillInDlq(row: LedgerRow, parking: unknown): boolean {
  if (row.state === "moved" || row.state === "missing" || row.state === "returned" || row.state === "unconfirmed")
    return false;
  if (row.state === "parked") return (parking as { kind?: string })?.kind !== "queue";
  return true;
}

/** Every letter's outcome, in the ledger's order, a keyset page at a time; the state filter and cursor are in the URL. */
export function LedgerTable({
  redrive,
  counts,
  rows,
  nextAfter,
  state,
  after,
}: {
  redrive: RedriveView;
  counts: Record<string, number>;
  rows: LedgerRow[];
  nextAfter: number | null;
  state: string | null;
  after: number | null;
}) {
  const href = (o: { state?: string | null; after?: number | null }) =>
    redriveJobHref(redrive.connectionId, redrive.queue, redrive.id, {
      state: o.state === undefined ? state : o.state,
      after: o.after ?? null,
    });
  const total = FILTERS.reduce((a, f) => a + (counts[f] ?? 0), 0);
  const now = Date.now();
  return (
    <section className="section" aria-labelledby="ledger-h">
      <div className="toolbar">
        <h2 id="ledger-h" style={{ margin: 0 }}>
          Every letter
        </h2>
        <nav className="ledger-filters" aria-label="Filter by outcome" data-testid="ledger-filters">
          <Link
            href={href({ state: null })}
            className="chip"
            aria-current={!state ? "true" : undefined}
            data-testid="ledger-filter-all"
          >
            all <span className="muted">{formatCount(total)}</span>
          </Link>
          {FILTERS.filter((f) => counts[f] || f === state).map((f) => (
            <Link
              key={f}
              href={href({ state: f })}
              className="chip"
              aria-current={state === f ? "true" : undefined}
              data-testid={`ledger-filter-${f}`}
            >
              {ledgerWords(f, redrive.state)} <span className="muted">{formatCount(counts[f] ?? 0)}</span>
            </Link>
          ))}
        </nav>
      </div>
      <div className="table-wrap scroll ledger-wrap">
        <table className="grid" data-testid="ledger-table">
          <thead>
            <tr>
              <th className="num">#</th>
              <th>Letter</th>
              <th>Outcome</th>
              <th>Stage</th>
              <th>Destination</th>
              <th>Reason</th>
              <th className="num">Redrives</th>
              <th>When</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id} data-testid="ledger-row" data-state={row.state} data-letter-id={row.letterId}>
                <td className="num muted">{row.seq}</td>
                <td className="mono nowrap" title={row.letterId}>
                  {stillInDlq(row, redrive.plan.parking) ? (
                    <Link
                      href={letterHref(redrive.connectionId, redrive.queue, row.letterId)}
                      data-testid="ledger-letter-link"
                    >
                      {truncate(row.letterId, 30)}
                    </Link>
                  ) : (
                    <span title={`${row.letterId} is no longer in ${redrive.queue}`}>{truncate(row.letterId, 30)}</span>
                  )}
                  {row.messageId && row.messageId !== row.letterId ? (
                    <div className="muted small">{truncate(row.messageId, 36)}</div>
                  ) : null}
                </td>
                <td>
                  <span className={`badge ${BADGE[row.state] ?? ""}`}>{ledgerWords(row.state, redrive.state)}</span>
                </td>
                <td className="muted">{row.stage ?? "—"}</td>
                <td className="mono small wrap-anywhere">{row.destination ?? <span className="muted">—</span>}</td>
                <td className="small wrap-anywhere" style={{ maxWidth: 360 }}>
                  {row.reason ?? <span className="muted">—</span>}
                </td>
                <td className="num">
                  {row.state === "moved" || row.state === "returned" ? row.prevCount + 1 : row.prevCount}
                </td>
                <td className="nowrap">
                  {/* Relative to this render: the table re-renders with every poll. */}
                  <time
                    dateTime={row.movedAt ?? row.updatedAt}
                    title={formatUtc(row.movedAt ?? row.updatedAt)}
                    suppressHydrationWarning
                  >
                    {formatRelative(row.movedAt ?? row.updatedAt, now)}
                  </time>
                </td>
              </tr>
            ))}
            <EmptyRow show={rows.length === 0} columns={8}>
              {state ? `No letter is ${LEDGER_WORDS[state] ?? state}.` : "The ledger is empty."}
            </EmptyRow>
          </tbody>
        </table>
      </div>
      <nav className="pager toolbar" aria-label="Ledger pages">
        {after ? (
          <Link className="btn btn-small" href={href({ after: null })} data-testid="ledger-first">
            ← First page
          </Link>
        ) : (
          <span className="btn btn-small" aria-disabled="true">
            ← First page
          </span>
        )}
        {nextAfter ? (
          <Link className="btn btn-small" href={href({ after: nextAfter })} data-testid="ledger-next">
            Next →
          </Link>
        ) : (
          <span className="btn btn-small" aria-disabled="true">
            Next →
          </span>
        )}
        <span className="hint">50 a page, in redrive order</span>
      </nav>
    </section>
  );
}
