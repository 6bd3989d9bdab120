"use client";

import Link from "@/components/ui/link";
import { useRouter } from "next/navigation";
import { useMemo, useState } from "react";
import { RelativeTime } from "@/components/ui/relative-time";
import { VisibleText } from "@/components/ui/visible-text";
import { fieldsInUse } from "@/lib/letter/failure-fields";
import type { LetterRow } from "@/lib/dlq/types";
import { letterHref } from "@/lib/dlq/links";
import type { LetterLabels } from "@/lib/dlq/wording";
import { HandledBadge } from "./handled-badge";
import { formatBytes, truncate } from "@/lib/format";
import { EmptyRow } from "@/components/ui/empty-row";
import { ROW, ROW_KEYS, ROW_OPEN, RowKeys } from "@/components/ui/row-keys";

/**
 * One page of letters. Keyboard (components/ui/row-keys.tsx): j/k move the selection, Enter opens,
 * `/` focuses the filter, Esc leaves the filter or goes back to the DLQ list. Pages are bounded
 * (≤ 200 rows), so rows are not virtualised. A column is hidden when no letter on the page has a
 * value for it.
 */
export function LettersTable({
  connectionId,
  queue,
  letters,
  backHref,
  labels,
}: {
  connectionId: string;
  queue: string;
  letters: LetterRow[];
  backHref: string;
  labels: LetterLabels;
}) {
  const router = useRouter();
  const [filter, setFilter] = useState("");

  const visible = useMemo(() => {
    const f = filter.trim().toLowerCase();
    if (!f) return letters;
    return letters.filter((l) =>
      [
        l.id,
        l.messageId,
        l.failure.reason,
        l.failure.originQueue,
        l.failure.exchange,
        l.failure.exceptionClass,
        l.failure.exceptionMessage,
        l.failure.wrapperClass,
        ...l.failure.routingKeys,
      ]
        .filter(Boolean)
        .join(" ")
        .toLowerCase()
        .includes(f),
    );
  }, [letters, filter]);

  // From the whole page, not the filtered rows, so columns do not jump while typing.
  const used = useMemo(() => fieldsInUse(letters.map((l) => l.failure)), [letters]);
  const show = {
    died: used.has("deadLetteredAt"),
    origin: used.has("origin"),
    route: used.has("exchange") || used.has("routingKeys"),
    count: used.has("count"),
    exception: used.has("exceptionClass") || used.has("exceptionMessage"),
  };
  const columns = 4 + Object.values(show).filter(Boolean).length;
  // Reading the page raised a count on its letters (SQS receives): say by how much, once.
  const first = letters.find((l) => l.readRaised)?.readRaised;
  const raised = first
    ? { by: first.by, label: first.field === "count" ? labels.count.toLowerCase() : "delivery count" }
    : null;

  return (
    <>
      <RowKeys searchId="letter-filter" backHref={backHref} />
      <div className="toolbar">
        <label className="sr-only" htmlFor="letter-filter">
          Filter letters on this page
        </label>
        <input
          id="letter-filter"
          data-testid="letter-filter"
          placeholder={`Filter this page: reason, exception, ${labels.origin.toLowerCase()}, id  ( / )`}
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          style={{ width: 360 }}
        />
        <span className="hint">
          <span className="kbd">j</span>/<span className="kbd">k</span> move · <span className="kbd">Enter</span> open ·{" "}
          <span className="kbd">/</span> filter · <span className="kbd">Esc</span> back
        </span>
      </div>
      {raised ? (
        <p className="hint" data-testid="read-raised-page">
          This page&apos;s read raised each letter&apos;s {raised.label} by {raised.by}; the counts shown include it.
        </p>
      ) : null}
      <div className="table-wrap scroll">
        <table className="grid" data-testid="letters-table" {...ROW_KEYS}>
          <thead>
            <tr>
              <th className="num">#</th>
              {show.died ? <th>Died</th> : null}
              <th>Reason</th>
              {show.origin ? <th>{labels.origin}</th> : null}
              {show.route ? <th>Exchange · routing keys</th> : null}
              {show.count ? <th className="num">{labels.count}</th> : null}
              {show.exception ? <th>Exception</th> : null}
              <th className="num">Size</th>
              <th>{labels.letterId}</th>
            </tr>
          </thead>
          <tbody>
            {visible.map((l) => {
              const f = l.failure;
              const href = letterHref(connectionId, queue, l.id);
              const exception = [f.exceptionClass, f.exceptionMessage].filter(Boolean).join(": ");
              return (
                <tr
                  key={l.id}
                  {...ROW}
                  data-testid="letter-row"
                  data-letter-id={l.id}
                  onDoubleClick={() => router.push(href)}
                >
                  <td className="num">
                    <Link href={href} data-testid="letter-link" {...ROW_OPEN}>
                      {l.position + 1}
                    </Link>
                  </td>
                  {show.died ? (
                    <td className="nowrap">
                      <RelativeTime value={f.deadLetteredAt} />
                    </td>
                  ) : null}
                  <td className="nowrap">
                    {f.reason ? (
                      <span className="badge badge-info">{f.reason}</span>
                    ) : l.handled ? null : (
                      <span className="muted">—</span>
                    )}
                    {l.handled ? (
                      <>
                        {" "}
                        <HandledBadge handled={l.handled} />
                      </>
                    ) : null}
                  </td>
                  {show.origin ? (
                    <td className="mono wrap-anywhere">
                      {f.originQueue ? <VisibleText text={f.originQueue} /> : <span className="muted">—</span>}
                    </td>
                  ) : null}
                  {show.route ? (
                    <td className="mono wrap-anywhere">
                      {f.exchange === null ? (
                        <span className="muted">—</span>
                      ) : f.exchange === "" ? (
                        <span className="muted">(default)</span>
                      ) : (
                        f.exchange
                      )}
                      {f.routingKeys.length ? <span className="muted"> · {f.routingKeys.join(", ")}</span> : null}
                    </td>
                  ) : null}
                  {show.count ? <td className="num">{f.count ?? "—"}</td> : null}
                  {show.exception ? (
                    <td
                      className="truncate"
                      data-testid="letter-exception"
                      title={
                        exception ? `${exception}${f.wrapperClass ? ` (wrapped in ${f.wrapperClass})` : ""}` : undefined
                      }
                    >
                      {exception ? <VisibleText text={truncate(exception, 90)} /> : <span className="muted">—</span>}
                    </td>
                  ) : null}
                  <td className="num nowrap">{formatBytes(l.bodySize)}</td>
                  <td className="mono truncate" style={{ maxWidth: 200 }} title={l.id}>
                    <Link href={href}>{truncate(l.id, 28)}</Link>
                  </td>
                </tr>
              );
            })}
            <EmptyRow show={visible.length === 0} columns={columns}>
              {letters.length === 0
                ? "No letters on this page. The DLQ may be empty, or the page is past its end."
                : "No letter on this page matches the filter."}
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
