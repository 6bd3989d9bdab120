"use client";

import Link from "next/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { formatBytes, truncate } from "@/lib/format";
import { letterHref } from "@/lib/dlq/links";
import type { IndexedLetter } from "@/lib/triage/queries";
import { DispositionBadge } from "./disposition-badge";
import { useRowKeys } from "./use-row-keys";

/** One keyset page of the filtered set, newest first; rows open the letter page. Gone letters say when they left. */
export function TriageLettersTable({ connectionId, queue, letters, keyboard, backHref }: { connectionId: string; queue: string; letters: IndexedLetter[]; keyboard: boolean; backHref: string }) {
  const hrefOf = (i: number) => (letters[i] && !letters[i].goneAt ? letterHref(connectionId, queue, letters[i].letterId) : null);
  const { rowProps } = useRowKeys({ count: letters.length, hrefOf, backHref, searchId: "triage-q", enabled: keyboard });
  return (
    <div className="table-wrap scroll letters-wrap">
      <table className="grid" data-testid="triage-letters">
        <thead>
          <tr>
            <th>Arrived</th>
            <th>Exception or reason</th>
            <th>Disposition</th>
            <th>Origin</th>
            <th className="num">Size</th>
            <th>Letter</th>
          </tr>
        </thead>
        <tbody>
          {letters.map((l, i) => {
            const href = letterHref(connectionId, queue, l.letterId);
            const exception = [l.exceptionClass, l.exceptionMessage].filter(Boolean).join(": ");
            return (
              <tr key={l.letterId} {...rowProps(i)} data-testid="triage-letter-row" data-letter-id={l.letterId} data-gone={l.goneAt ? "1" : undefined} className={l.goneAt ? "is-gone" : undefined}>
                <td className="nowrap">
                  <RelativeTime value={l.arrivedAt} />
                </td>
                <td className="truncate" title={exception || l.reason || undefined} style={{ maxWidth: 460 }}>
                  {exception ? truncate(exception, 110) : l.reason ? <span className="badge badge-info">{l.reason}</span> : <span className="muted">—</span>}
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
                    <Link href={href} data-testid="triage-letter-link">
                      {truncate(l.letterId, 28)}
                    </Link>
                  )}
                </td>
              </tr>
            );
          })}
          {letters.length === 0 ? (
            <tr>
              <td colSpan={6} className="empty">
                No letter in the index matches these filters.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
