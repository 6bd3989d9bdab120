"use client";

import Link from "@/components/ui/link";
import { RelativeTime } from "@/components/ui/relative-time";
import { formatCount, formatUtc, truncate } from "@/lib/format";
import { letterHref } from "@/lib/dlq/links";
import { newRedriveQuery } from "@/lib/redrive/ui-format";
import type { GroupView } from "@/lib/triage/queries";
import {
  nextSort,
  sortGroups,
  triageHref,
  withFilter,
  type GroupSortKey,
  type TriageView,
} from "@/lib/triage/view-params";
import { ArrivalsChart } from "./arrivals-chart";
import { DispositionBadge } from "./disposition-badge";
import { ShareBar } from "./share-bar";
import { EmptyRow } from "@/components/ui/empty-row";
import { ROW, ROW_KEYS, ROW_OPEN, RowKeys } from "@/components/ui/row-keys";

/**
 * The DLQ's groups (exception class + normalised message + top frame, or the broker's reason).
 * Sort order lives in the URL. Enter or a click on a label filters the letter list to the group.
 */
export function GroupsTable({
  connectionId,
  queue,
  view,
  groups,
  ruleText,
  keyboard,
  backHref,
  redriveBase,
  repairBase,
}: {
  connectionId: string;
  queue: string;
  view: TriageView;
  groups: GroupView[];
  ruleText: Record<string, string>;
  keyboard: boolean;
  backHref: string;
  /** The new-redrive URL (without query) when the viewer may start redrives. */
  redriveBase?: string;
  /** The group repair URL (without query) when the viewer may repair and the config enables repair for this DLQ. */
  repairBase?: string;
}) {
  const rows = sortGroups(groups, view.sort);

  const sortHeader = (key: GroupSortKey, label: string, className?: string) => {
    const active = view.sort.key === key;
    return (
      <th className={className} aria-sort={active ? (view.sort.dir === "asc" ? "ascending" : "descending") : "none"}>
        <Link
          href={triageHref(connectionId, queue, { ...view, sort: nextSort(view.sort, key) })}
          className="sort-link"
          scroll={false}
          data-testid={`sort-${key}`}
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
      <table className="grid groups" data-testid="groups-table" {...(keyboard ? ROW_KEYS : {})}>
        <thead>
          <tr>
            {sortHeader("label", "Group")}
            {sortHeader("count", "Letters", "num")}
            <th>Share</th>
            {sortHeader("first", "First seen")}
            {sortHeader("last", "Last seen")}
            <th>Origins · versions</th>
            <th>Arrivals</th>
            <th>Samples</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => {
            const href = triageHref(connectionId, queue, withFilter(view, { group: g.groupKey }));
            const current = view.group === g.groupKey;
            return (
              <tr
                key={g.groupKey}
                {...ROW}
                data-testid="group-row"
                data-group-key={g.groupKey}
                data-count={g.count}
                data-class={g.exceptionClass ?? ""}
                className={current ? "is-current" : undefined}
              >
                <td className="group-label">
                  <div className="group-title">
                    <Link
                      href={href}
                      data-testid="group-link"
                      {...ROW_OPEN}
                      aria-current={current ? "true" : undefined}
                      title={g.label}
                    >
                      {g.basis === "exception" ? (
                        <span className="mono strong">{g.exceptionClass ?? "(no class)"}</span>
                      ) : (
                        <span>{g.reason ?? "No reason given"}</span>
                      )}
                    </Link>{" "}
                    <DispositionBadge
                      disposition={g.disposition}
                      ruleId={g.ruleId}
                      ruleText={g.ruleId ? ruleText[g.ruleId] : undefined}
                    />
                    {g.disposition === "transient" && g.burst.burst ? (
                      <span
                        className="badge badge-warn"
                        title={`${formatUtc(g.burst.from)} – ${formatUtc(g.burst.to)}: ${Math.round(g.burst.share * 100)}% of the group arrived together`}
                        data-testid="burst-flag"
                      >
                        likely dependency outage
                      </span>
                    ) : null}
                    {redriveBase ? (
                      <Link
                        href={`${redriveBase}${newRedriveQuery({ view: { group: g.groupKey } })}`}
                        className="btn btn-small group-redrive"
                        data-testid="group-redrive"
                        title={`Redrive the ${g.count} letters of this group: sample first, then the rest`}
                      >
                        Redrive…
                      </Link>
                    ) : null}
                    {repairBase ? (
                      <Link
                        href={`${repairBase}${newRedriveQuery({ view: { group: g.groupKey } })}`}
                        className="btn btn-small group-redrive"
                        data-testid="group-repair"
                        title={`Repair the ${g.count} letters of this group with one JSON patch, previewed letter by letter, then redrive them`}
                      >
                        Repair…
                      </Link>
                    ) : null}
                  </div>
                  {g.basis === "exception" ? (
                    <div className="group-sub">
                      {g.normalizedMessage ? (
                        <span title={g.normalizedMessage}>{truncate(g.normalizedMessage, 140)}</span>
                      ) : null}
                      {g.topFrame ? (
                        <span className="mono muted" title={g.topFrame}>
                          {" "}
                          @ {truncate(g.topFrame, 90)}
                        </span>
                      ) : null}
                    </div>
                  ) : (
                    <div className="group-sub muted">{g.label}</div>
                  )}
                  {g.disposition === "permanent" ? (
                    <div className="group-warn" data-testid="permanent-warning">
                      Redriving without a fix will fail again.
                    </div>
                  ) : null}
                </td>
                <td className="num strong" data-testid="group-count">
                  {formatCount(g.count)}
                </td>
                <td className="nowrap">
                  <ShareBar share={g.share} />
                </td>
                <td className="nowrap">
                  <RelativeTime value={g.firstAt} />
                </td>
                <td className="nowrap">
                  <RelativeTime value={g.lastAt} />
                </td>
                <td className="mono wrap-anywhere small">
                  {g.origins.length ? g.origins.slice(0, 3).join(", ") : <span className="muted">—</span>}
                  {g.origins.length > 3 ? <span className="muted"> +{g.origins.length - 3}</span> : null}
                  {g.versions.length ? <div className="muted">v {g.versions.slice(0, 3).join(", ")}</div> : null}
                </td>
                <td>
                  <ArrivalsChart buckets={g.buckets} bucketSeconds={g.bucketSeconds} burst={g.burst} />
                </td>
                <td className="nowrap samples">
                  {g.sampleLetterIds.slice(0, 3).map((id, n) => (
                    <Link key={id} href={letterHref(connectionId, queue, id)} title={id} data-testid="sample-letter">
                      #{n + 1}
                    </Link>
                  ))}
                </td>
              </tr>
            );
          })}
          <EmptyRow show={rows.length === 0} columns={8}>
            No groups yet. Scan the DLQ to read its letters into the index.
          </EmptyRow>
        </tbody>
      </table>
    </div>
  );
}
