"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import {
  createColumnHelper,
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type SortingState,
} from "@tanstack/react-table";
import { useEffect, useMemo, useState } from "react";
import type { DlqSummary } from "@/lib/brokers/types";
import type { DlqListing } from "@/lib/dlq/types";
import { dlqHref } from "@/lib/dlq/links";
import { unhandledCount } from "@/lib/dlq/partitions";
import { formatCount } from "@/lib/format";
import { dlqKeys } from "./query-keys";
import { EmptyRow } from "@/components/ui/empty-row";

type Row = DlqSummary & { connectionName: string };

async function fetchListing(): Promise<DlqListing> {
  const res = await fetch("/api/dlqs", { cache: "no-store", headers: { Accept: "application/json" } });
  const body = (await res.json().catch(() => null)) as { ok: boolean; data?: DlqListing; error?: { message: string } } | null;
  if (!res.ok || !body?.ok || !body.data) throw new Error(body?.error?.message ?? `The console answered ${res.status}.`);
  return body.data;
}

const col = createColumnHelper<Row>();

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

export function DlqList({ initial }: { initial: DlqListing }) {
  const query = useQuery({
    queryKey: dlqKeys.list(),
    queryFn: fetchListing,
    initialData: initial,
    initialDataUpdatedAt: new Date(initial.fetchedAt).getTime(),
    refetchInterval: 10_000,
    refetchIntervalInBackground: false,
  });
  const data = query.data;
  const [sorting, setSorting] = useState<SortingState>([]);
  const [filter, setFilter] = useState("");

  const rows = useMemo<Row[]>(() => {
    const all = data.connections.flatMap((c) => c.dlqs.map((d) => ({ ...d, connectionName: c.displayName })));
    const f = filter.trim().toLowerCase();
    return f ? all.filter((r) => `${r.name} ${r.connectionId} ${r.origins.join(" ")}`.toLowerCase().includes(f)) : all;
  }, [data, filter]);

  const columns = useMemo(
    () => [
      col.accessor("name", {
        header: "DLQ",
        cell: (c) => (
          <Link href={dlqHref(c.row.original.connectionId, c.row.original.name)} className="mono" data-testid="dlq-link">
            {c.getValue()}
          </Link>
        ),
      }),
      col.accessor("connectionName", { header: "Connection", cell: (c) => <span title={c.row.original.connectionId}>{c.getValue()}</span> }),
      col.accessor((r) => `${r.kind} · ${r.queueType}`, { id: "type", header: "Type" }),
      col.accessor("depth", {
        header: "Depth",
        sortUndefined: "last",
        cell: (c) => {
          // Where letters stay after handling (no per-letter removal), depth counts them too.
          const unhandled = unhandledCount(c.row.original);
          return (
            <>
              <span data-testid="dlq-depth">{formatCount(c.getValue())}</span>
              {unhandled !== null ? (
                <span className="muted" data-testid="dlq-unhandled" title="Letters the console has not redriven or discarded yet">
                  {" "}
                  · {formatCount(unhandled)} unhandled
                </span>
              ) : null}
            </>
          );
        },
        meta: { num: true },
      }),
      col.accessor((r) => r.inFlight ?? -1, {
        id: "inflight",
        header: "In flight / consumers",
        cell: (c) => `${formatCount(c.row.original.inFlight)} / ${formatCount(c.row.original.consumers)}`,
        meta: { num: true },
      }),
      col.accessor((r) => r.origins.join(", "), {
        id: "origins",
        header: "Origins",
        cell: (c) => (c.getValue() ? <span className="mono wrap-anywhere">{c.getValue()}</span> : <span className="muted">unknown</span>),
      }),
      col.accessor("source", { header: "Source", cell: (c) => <span className="badge">{c.getValue()}</span> }),
      col.accessor((r) => (r.readRisk ? 1 : 0) + r.warnings.length, {
        id: "warnings",
        header: "Warnings",
        cell: (c) => {
          const r = c.row.original;
          if (!r.readRisk && r.warnings.length === 0) return <span className="muted">—</span>;
          return (
            <span style={{ display: "inline-flex", gap: 4, flexWrap: "wrap" }}>
              {r.readRisk ? (
                <span className="badge badge-danger" title={r.readRisk.message} data-testid="dlq-risk">
                  read risk: {r.readRisk.kind}
                </span>
              ) : null}
              {r.warnings.map((w) => (
                <span key={w.code} className="badge badge-warn" title={w.message} data-testid="dlq-warning" data-code={w.code}>
                  {w.label}
                </span>
              ))}
            </span>
          );
        },
      }),
    ],
    [],
  );

  const table = useReactTable({
    data: rows,
    columns,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    getRowId: (r) => `${r.connectionId}/${r.name}`,
  });

  const down = data.connections.filter((c) => c.status === "error");

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
      <div className="toolbar">
        <label className="sr-only" htmlFor="dlq-filter">
          Filter DLQs
        </label>
        <input
          id="dlq-filter"
          data-testid="dlq-filter"
          placeholder="Filter by name, connection, origin  ( / )"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          style={{ width: 320 }}
        />
        <span className="hint">
          {rows.length} DLQ{rows.length === 1 ? "" : "s"} on {data.connections.length} connection{data.connections.length === 1 ? "" : "s"}
        </span>
        <span className="spacer" />
        <Updated at={query.dataUpdatedAt} failing={query.isError} />
      </div>
      <div className="table-wrap scroll">
        <table className="grid" data-testid="dlq-table">
          <thead>
            {table.getHeaderGroups().map((hg) => (
              <tr key={hg.id}>
                {hg.headers.map((h) => {
                  const sorted = h.column.getIsSorted();
                  const num = (h.column.columnDef.meta as { num?: boolean } | undefined)?.num;
                  return (
                    <th key={h.id} className={num ? "num" : undefined} aria-sort={sorted === "asc" ? "ascending" : sorted === "desc" ? "descending" : "none"}>
                      <button type="button" className="sort" onClick={h.column.getToggleSortingHandler()}>
                        {flexRender(h.column.columnDef.header, h.getContext())}
                        <span aria-hidden>{sorted === "asc" ? "▲" : sorted === "desc" ? "▼" : ""}</span>
                      </button>
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id} data-testid="dlq-row" data-connection-id={row.original.connectionId} data-queue={row.original.name}>
                {row.getVisibleCells().map((cell) => {
                  const num = (cell.column.columnDef.meta as { num?: boolean } | undefined)?.num;
                  return (
                    <td key={cell.id} className={num ? "num nowrap" : undefined}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  );
                })}
              </tr>
            ))}
            <EmptyRow show={rows.length === 0} columns={columns.length}>
              {filter ? "No DLQ matches the filter." : down.length ? "No DLQs to show while the broker is unreachable." : "No DLQs found. Name them in the config file, or enable discovery through the management API."}
            </EmptyRow>
          </tbody>
        </table>
      </div>
    </>
  );
}
