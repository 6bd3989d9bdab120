"use client";

import Link from "@/components/ui/link";
import { useQuery } from "@tanstack/react-query";
import { type CSSProperties, useEffect, useMemo, useState } from "react";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { DlqListing } from "@/lib/dlq/types";
import { dlqHref } from "@/lib/dlq/links";
import type { Overview } from "@/lib/operations/use-cases";
import {
  dlqKey,
  FIRST_DIR,
  mergeOverview,
  overviewQuery,
  sortOverview,
  OVERVIEW_PAGE,
  type OverviewItem,
  type SortDir,
  type SortKey,
} from "@/lib/operations/ui-overview";
import { dlqKeys } from "./query-keys";
import { opsKeys } from "@/components/operations/query-keys";
import { DepthCell, DlqDetail, DlqWarnings } from "./dlq-live-cells";
import {
  FindingsCell,
  InflowCell,
  LastAlertCell,
  LostInCell,
  OldestCell,
  OwnerCell,
  StaleBadge,
} from "@/components/operations/overview-cells";
import { DepthTrend } from "@/components/operations/depth-trend";
import { TopFailureCell } from "@/components/operations/top-failure-cell";
import { AttentionLink } from "@/components/issues/attention-link";
import { useNow } from "@/components/operations/use-now";
import { EmptyRow } from "@/components/ui/empty-row";
import styles from "./overview.module.css";
import { VisibleText } from "@/components/ui/visible-text";

type Live = DlqSummary & { connectionName: string };
type Item = OverviewItem<Live>;

async function fetchJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
  const body = (await res.json().catch(() => null)) as { ok: boolean; data?: T; error?: { message: string } } | null;
  if (!res.ok || !body?.ok || !body.data)
    throw new Error(body?.error?.message ?? `The console answered ${res.status}.`);
  return body.data;
}

function Updated({ at, failing }: { at: number; failing: boolean }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const s = Math.max(0, Math.round((now - at) / 1000));
  return (
    <span className="hint" data-testid="dlq-updated" suppressHydrationWarning>
      updated {s < 2 ? "just now" : `${s} s ago`}
      {failing ? " · refresh failing, retrying" : " · refreshes every 10 s"}
    </span>
  );
}

function SamplerNote({ overview, now }: { overview: Overview | null; now: number }) {
  if (!overview) return <span className="hint">The sampler&apos;s figures could not be read.</span>;
  const last = overview.lastSampledAt
    ? Math.max(0, Math.round((now - new Date(overview.lastSampledAt).getTime()) / 1000))
    : null;
  return (
    <span className="hint" data-testid="sampler-note" suppressHydrationWarning>
      Depth is live from the broker; inflow, oldest, lost in and trend come from the sampler every{" "}
      {overview.sampleIntervalSeconds} s
      {last === null ? " (no round yet)" : ` (last round ${last < 2 ? "just now" : `${last} s ago`})`}.
    </span>
  );
}

interface Column {
  id: string;
  header: string;
  sort?: SortKey;
  num?: boolean;
  title?: string;
  /** Its width on a wide screen, where the columns are fixed (overview.module.css); the name and failure share the rest. */
  width?: number;
}

/**
 * Ten columns fit a 1440-pixel screen: what locates a DLQ (connection, type, origins, source) and
 * what warns about reading it fold under its name; in-flight and consumers under its depth.
 */
const COLUMNS: Column[] = [
  { id: "name", header: "DLQ", sort: "name", title: "Name, then connection · type · origins · source" },
  {
    id: "failure",
    header: "Top failure",
    title: "The largest triage group's class or reason and its share, from the last scan or a free sample",
  },
  {
    id: "depth",
    header: "Depth",
    sort: "depth",
    num: true,
    width: 124,
    title: "Letters in the DLQ, live from the broker",
  },
  {
    id: "inflow",
    header: "Inflow",
    sort: "inflow",
    num: true,
    width: 68,
    title: "Letters per minute over the last hour (sampler)",
  },
  {
    id: "oldest",
    header: "Oldest",
    sort: "oldest",
    num: true,
    width: 84,
    title: "Age of the oldest letter (broker or last scan)",
  },
  {
    id: "lost",
    header: "Lost in",
    sort: "lost",
    width: 152,
    title: "Time until the oldest letter is lost to the DLQ's retention",
  },
  { id: "trend", header: "Last hour", width: 110, title: "Depth per minute over the last hour (sampler)" },
  { id: "owner", header: "Owner", sort: "owner", width: 108 },
  {
    id: "findings",
    header: "Findings",
    sort: "findings",
    width: 96,
    title: "Open configuration findings: worst severity and count",
  },
  { id: "alert", header: "Last alert", sort: "alert", width: 80 },
];

function SortButton({
  id,
  label,
  sorted,
  onClick,
}: {
  id: string;
  label: string;
  sorted: SortDir | null;
  onClick: () => void;
}) {
  return (
    <button type="button" className="sort" data-testid={`sort-${id}`} onClick={onClick}>
      {label}
      <span aria-hidden>{sorted === "asc" ? "▲" : sorted === "desc" ? "▼" : ""}</span>
    </button>
  );
}

export interface ListView {
  key: SortKey;
  dir: SortDir;
  q: string;
  /** Also list DLQs the sampler knows but their broker no longer has. */
  gone: boolean;
  /** Every row, not only the first OVERVIEW_PAGE. */
  all: boolean;
}

/**
 * The DLQ overview: the broker's live listing (depths, origins, warnings; polled every 10 s) merged
 * with the sampler's figures (polled alike), needs attention first unless a column is chosen. The
 * sort and the filter live in the URL, so a view can be pasted into an incident channel.
 */
export function DlqList({
  initial,
  initialOverview,
  view,
  renderedAt,
}: {
  initial: DlqListing;
  initialOverview: Overview | null;
  view: ListView;
  renderedAt: number;
}) {
  const query = useQuery({
    queryKey: dlqKeys.list(),
    queryFn: () => fetchJson<DlqListing>("/api/dlqs"),
    initialData: initial,
    initialDataUpdatedAt: new Date(initial.fetchedAt).getTime(),
    refetchInterval: 10_000,
    refetchIntervalInBackground: false,
  });
  const ops = useQuery({
    queryKey: opsKeys.overview(),
    queryFn: () => fetchJson<Overview>("/api/operations/overview"),
    ...(initialOverview ? { initialData: initialOverview } : {}),
    refetchInterval: 10_000,
    refetchIntervalInBackground: false,
  });
  const data = query.data;
  const overview = ops.data ?? null;
  const now = useNow(renderedAt, 15_000);
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir }>({ key: view.key, dir: view.dir });
  const [filter, setFilter] = useState(view.q);
  const [showGone, setShowGone] = useState(view.gone);
  const [showAll, setShowAll] = useState(view.all);

  useEffect(() => {
    const url = `${window.location.pathname}${overviewQuery({ ...sort, q: filter, gone: showGone, all: showAll })}`;
    // Next's router follows history.replaceState: the URL reproduces the view without a server round trip.
    if (url !== `${window.location.pathname}${window.location.search}`) window.history.replaceState(null, "", url);
  }, [sort, filter, showGone, showAll]);

  const names = useMemo(() => new Map(data.connections.map((c) => [c.connectionId, c.displayName])), [data]);
  const kinds = useMemo(() => new Map(data.connections.map((c) => [c.connectionId, c.kind])), [data]);
  const connectionName = (id: string) => names.get(id) ?? id;
  const failures = useMemo(
    () => new Map((overview?.failures ?? []).map((f) => [dlqKey(f.connectionId, f.queue), f])),
    [overview],
  );
  const attention = useMemo(
    () => new Map((overview?.attention ?? []).map((a) => [dlqKey(a.connectionId, a.queue), a])),
    [overview],
  );

  const rows = useMemo<Item[]>(() => {
    const live = data.connections.flatMap((c) => c.dlqs.map((d) => ({ ...d, connectionName: c.displayName })));
    // DLQs gone from their broker keep their status for history: listed only on request.
    const merged = mergeOverview(live, overview?.rows ?? []).filter((r) => showGone || r.live || !r.ops?.missingSince);
    const f = filter.trim().toLowerCase();
    const shown = f
      ? merged.filter((r) =>
          `${r.name} ${r.connectionId} ${names.get(r.connectionId) ?? ""} ${r.live?.origins.join(" ") ?? ""} ${r.ops?.owner?.team ?? ""} ${failures.get(r.key)?.label ?? ""}`
            .toLowerCase()
            .includes(f),
        )
      : merged;
    return sortOverview(shown, sort.key, sort.dir, (id) => names.get(id) ?? id, now);
  }, [data, overview, filter, sort, names, now, showGone, failures]);

  const goneCount = useMemo(() => {
    const listed = new Set(data.connections.flatMap((c) => c.dlqs.map((d) => dlqKey(c.connectionId, d.name))));
    return (overview?.rows ?? []).filter((o) => o.missingSince && !listed.has(dlqKey(o.connectionId, o.queue))).length;
  }, [data, overview]);
  const toggle = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === "asc" ? "desc" : "asc" } : { key, dir: FIRST_DIR[key] }));
  const shown = showAll ? rows : rows.slice(0, OVERVIEW_PAGE);
  const down = data.connections.filter((c) => c.status === "error");
  const warnHours = overview?.deadlineWarnHours ?? 24;

  return (
    <>
      {down.map((c) => (
        <div key={c.connectionId} className="banner banner-danger" role="alert" data-testid="connection-down">
          <strong>
            {c.displayName} ({c.connectionId}) is unreachable:
          </strong>{" "}
          {c.error?.message ?? "no answer."} The console keeps retrying.
        </div>
      ))}
      {query.isError && !query.isFetching ? (
        <div className="banner banner-warn" role="status">
          Could not refresh the list: {(query.error as Error).message} Showing the last known depths.
        </div>
      ) : null}
      {ops.isError && !ops.isFetching ? (
        <div className="banner banner-warn" role="status" data-testid="overview-error">
          Could not refresh the sampler&apos;s figures: {(ops.error as Error).message}{" "}
          {overview ? "Showing the last ones read." : ""}
        </div>
      ) : null}
      <div className="toolbar">
        <label className="sr-only" htmlFor="dlq-filter">
          Filter DLQs
        </label>
        <input
          id="dlq-filter"
          data-testid="dlq-filter"
          placeholder="Filter by name, connection, origin, owner  ( / )"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          style={{ width: 320 }}
        />
        <span className="hint">
          {rows.length} DLQ{rows.length === 1 ? "" : "s"} on {data.connections.length} connection
          {data.connections.length === 1 ? "" : "s"}
        </span>
        {sort.key !== "attention" ? (
          <button
            type="button"
            className="btn btn-small btn-quiet"
            data-testid="sort-attention"
            onClick={() => setSort({ key: "attention", dir: "asc" })}
          >
            Needs attention first
          </button>
        ) : (
          <span className="hint" data-testid="sort-note">
            needs attention first
          </span>
        )}
        {goneCount > 0 || showGone ? (
          <label
            className="hint field-inline"
            title="DLQs the sampler has seen that their broker no longer lists (deleted, or no longer dead-lettered into)"
          >
            <input
              type="checkbox"
              checked={showGone}
              onChange={(e) => setShowGone(e.target.checked)}
              data-testid="show-gone"
            />
            show {goneCount} gone
          </label>
        ) : null}
        <span className="spacer" />
        <Updated at={query.dataUpdatedAt} failing={query.isError} />
      </div>
      <div className="toolbar">
        <SamplerNote overview={overview} now={now} />
      </div>
      <div className="table-wrap scroll">
        <table
          className={`grid overview ${styles.table}`}
          data-testid="dlq-table"
          data-sort={sort.key}
          data-dir={sort.dir}
        >
          <colgroup>
            {COLUMNS.map((c) => (
              <col key={c.id} style={c.width ? ({ "--col-width": `${c.width}px` } as CSSProperties) : undefined} />
            ))}
          </colgroup>
          <thead>
            <tr>
              {COLUMNS.map((c) => {
                const sorted = c.sort && sort.key === c.sort ? sort.dir : null;
                return (
                  <th
                    key={c.id}
                    className={c.num ? "num" : undefined}
                    title={c.title}
                    aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none"}
                  >
                    {c.id === "name" ? (
                      <>
                        <SortButton id="name" label="DLQ" sorted={sorted} onClick={() => toggle("name")} />
                        <span className="muted"> · </span>
                        <SortButton
                          id="connection"
                          label="connection"
                          sorted={sort.key === "connection" ? sort.dir : null}
                          onClick={() => toggle("connection")}
                        />
                      </>
                    ) : c.sort ? (
                      <button
                        type="button"
                        className="sort"
                        data-testid={`sort-${c.id}`}
                        onClick={() => toggle(c.sort!)}
                      >
                        {c.header}
                        <span aria-hidden>{sorted === "asc" ? "▲" : sorted === "desc" ? "▼" : ""}</span>
                      </button>
                    ) : (
                      c.header
                    )}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr
                key={r.key}
                data-testid="dlq-row"
                data-connection-id={r.connectionId}
                data-queue={r.name}
                data-sampled={r.ops ? "yes" : "no"}
              >
                <td className={styles.dlqCell}>
                  <Link
                    href={dlqHref(r.connectionId, r.name)}
                    className="mono strong wrap-anywhere"
                    data-testid="dlq-link"
                  >
                    <VisibleText text={r.name} />
                  </Link>{" "}
                  <StaleBadge ops={r.ops} now={now} />
                  {r.ops ? null : (
                    <span className="source-note" data-testid="not-sampled">
                      not sampled yet
                    </span>
                  )}
                  <DlqDetail
                    live={r.live}
                    connectionName={connectionName(r.connectionId)}
                    connectionId={r.connectionId}
                    fallbackType={`${kinds.get(r.connectionId) ?? "?"} ${r.ops?.queueType ?? "unknown"}`}
                  />
                  <DlqWarnings live={r.live} />
                </td>
                <td className={styles.failureCell}>
                  <TopFailureCell
                    failure={failures.get(r.key) ?? null}
                    connectionId={r.connectionId}
                    queue={r.name}
                    now={now}
                  />
                  <AttentionLink connectionId={r.connectionId} queue={r.name} counts={attention.get(r.key)} />
                </td>
                <DepthCell live={r.live} ops={r.ops} fetchedAt={query.dataUpdatedAt} now={now} />
                <td className="num nowrap">
                  <InflowCell ops={r.ops} now={now} />
                </td>
                <td className="num nowrap">
                  <OldestCell ops={r.ops} now={now} />
                </td>
                <td className="nowrap">
                  <LostInCell ops={r.ops} warnHours={warnHours} now={now} />
                </td>
                <td>
                  {r.ops ? (
                    <DepthTrend trend={r.ops.trend} endAt={r.ops.sampledAt} />
                  ) : (
                    <span className="muted" data-testid="dlq-trend" data-points={0}>
                      —
                    </span>
                  )}
                </td>
                <td>
                  <OwnerCell ops={r.ops} />
                </td>
                <td className="nowrap">
                  <FindingsCell ops={r.ops} />
                </td>
                <td className="nowrap">
                  <LastAlertCell ops={r.ops} now={now} />
                </td>
              </tr>
            ))}
            {shown.length < rows.length ? (
              <tr data-testid="dlq-more">
                <td colSpan={COLUMNS.length}>
                  <span className="hint">
                    Showing the first {shown.length.toLocaleString("en-US")} of {rows.length.toLocaleString("en-US")}{" "}
                    {sort.key === "attention" ? "(needs attention first)" : "in this order"}; the filter searches them
                    all.
                  </span>{" "}
                  <button
                    type="button"
                    className="btn btn-small"
                    data-testid="dlq-show-all"
                    onClick={() => setShowAll(true)}
                  >
                    Show all {rows.length.toLocaleString("en-US")}
                  </button>
                </td>
              </tr>
            ) : null}
            <EmptyRow show={rows.length === 0} columns={COLUMNS.length}>
              {filter
                ? "No DLQ matches the filter."
                : down.length
                  ? "No DLQs to show while the broker is unreachable."
                  : "No DLQs found. Name them in the config file, or enable discovery through the management API."}
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
