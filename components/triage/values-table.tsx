"use client";

import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { formatCount } from "@/lib/format";
import {
  filterForValue,
  nextSort,
  sortGroups,
  triageHref,
  withFilter,
  type GroupSortKey,
  type TriageView,
} from "@/lib/triage/view-params";
import { ShareBar } from "./share-bar";
import { EmptyRow } from "@/components/ui/empty-row";
import { ROW, ROW_KEYS, ROW_OPEN, RowKeys } from "@/components/ui/row-keys";

export interface ValueGroup {
  value: string | null;
  count: number;
  share: number;
  firstAt: string;
  lastAt: string;
}

const TITLES: Record<string, string> = { origin: "Origin queue", reason: "Reason", class: "Exception class" };

/** Letters grouped by origin, reason, exception class or a header's value; a value filters the list. */
export function ValuesTable({
  connectionId,
  queue,
  view,
  groups,
  keyboard,
  backHref,
}: {
  connectionId: string;
  queue: string;
  view: TriageView;
  groups: ValueGroup[];
  keyboard: boolean;
  backHref: string;
}) {
  const rows = sortGroups(
    groups.map((g) => ({ ...g, label: g.value ?? "" })),
    view.sort,
  );
  const hrefFor = (v: string | null) => {
    const change = filterForValue(view.by, v);
    return change ? triageHref(connectionId, queue, withFilter(view, change)) : null;
  };
  const title = TITLES[view.by] ?? `Header ${view.by.slice(7)}`;
  const sortHeader = (key: GroupSortKey, label: string, className?: string) => {
    const active = view.sort.key === key;
    return (
      <th className={className} aria-sort={active ? (view.sort.dir === "asc" ? "ascending" : "descending") : "none"}>
        <Link
          href={triageHref(connectionId, queue, { ...view, sort: nextSort(view.sort, key) })}
          className="sort-link"
          scroll={false}
        >
          {label}
          <span aria-hidden="true">{active ? (view.sort.dir === "asc" ? " ▲" : " ▼") : ""}</span>
        </Link>
      </th>
    );
  };
  return (
    <div className="table-wrap scroll groups-wrap">
      {keyboard ? <RowKeys searchId="triage-q" backHref={backHref} /> : null}
      <table className="grid" data-testid="values-table" {...(keyboard ? ROW_KEYS : {})}>
        <thead>
          <tr>
            {sortHeader("label", title)}
            {sortHeader("count", "Letters", "num")}
            <th>Share</th>
            {sortHeader("first", "First seen")}
            {sortHeader("last", "Last seen")}
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => {
            const href = hrefFor(g.value);
            return (
              <tr key={g.value ?? "\u0000null"} {...ROW} data-testid="value-row" data-value={g.value ?? ""}>
                <td className="mono wrap-anywhere">
                  {href ? (
                    <Link href={href} {...ROW_OPEN}>
                      {g.value === "" ? "(empty)" : g.value}
                    </Link>
                  ) : (
                    <span className="muted">(none)</span>
                  )}
                </td>
                <td className="num strong">{formatCount(g.count)}</td>
                <td className="nowrap">
                  <ShareBar share={g.share} />
                </td>
                <td className="nowrap">
                  <RelativeTime value={g.firstAt} />
                </td>
                <td className="nowrap">
                  <RelativeTime value={g.lastAt} />
                </td>
              </tr>
            );
          })}
          <EmptyRow show={rows.length === 0} columns={5}>
            No letters in the index for this grouping.
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
