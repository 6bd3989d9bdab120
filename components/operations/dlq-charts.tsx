"use client";

import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { formatCount, formatRate, formatUtc } from "@/lib/format";
import type { DlqOperations } from "@/lib/operations/use-cases";
import { opsKeys } from "./query-keys";
import { TimeSeriesChart } from "./time-series-chart";
import { chartAxis, rangeSpec, rangeWords } from "./chart-range";

async function fetchSeries(connectionId: string, queue: string, range: string): Promise<DlqOperations> {
  const qs = new URLSearchParams({ connectionId, queue, range });
  const res = await fetch(`/api/operations/dlq?${qs}`, { cache: "no-store", headers: { Accept: "application/json" } });
  const body = (await res.json().catch(() => null)) as {
    ok: boolean;
    data?: DlqOperations;
    error?: { message: string };
  } | null;
  if (!res.ok || !body?.ok || !body.data)
    throw new Error(body?.error?.message ?? `The console answered ${res.status}.`);
  return body.data;
}

export interface DlqOpsProps {
  connectionId: string;
  queue: string;
  initial: DlqOperations;
  refreshSeconds: number;
}

/** One DLQ's figures and series, refreshed every sampling interval; components of one page share it. */
export function useDlqOperations({ connectionId, queue, initial, refreshSeconds }: DlqOpsProps) {
  return useQuery({
    queryKey: opsKeys.dlq(connectionId, queue, initial.range),
    queryFn: () => fetchSeries(connectionId, queue, initial.range),
    initialData: initial,
    refetchInterval: Math.max(10, refreshSeconds) * 1000,
    refetchIntervalInBackground: false,
  });
}

/** Depth and inflow of one DLQ over the chosen range. */
export function DlqCharts(props: DlqOpsProps) {
  const { refreshSeconds } = props;
  const range = props.initial.range;
  const q = useDlqOperations(props);
  const points = q.data.points;
  const xs = useMemo(() => points.map((p) => p.t), [points]);
  const depth = useMemo(() => points.map((p) => p.depth), [points]);
  const depthMax = useMemo(() => points.map((p) => p.depthMax), [points]);
  const inflow = useMemo(() => points.map((p) => p.inflowPerMin), [points]);
  const words = rangeSpec(range);
  // The axis and the caption from one clock reading per data update: they cannot disagree.
  const { xRange, covered } = useMemo(() => {
    const now = Date.now();
    return { xRange: chartAxis(words, xs, now), covered: rangeWords(words, xs, now) };
  }, [words, xs]);
  const peak = Math.max(0, ...depthMax.filter((v): v is number => v !== null));
  const latest = [...depth].reverse().find((v) => v !== null) ?? null;
  const newest = points.length ? formatUtc(points[points.length - 1].t * 1000) : null;

  return (
    <div className="charts" data-testid="dlq-charts" data-range={range} data-points={points.length}>
      {q.isError && !q.isFetching ? (
        <div className="banner banner-warn" role="status">
          Could not refresh the charts: {(q.error as Error).message} Showing the last data read.
        </div>
      ) : null}
      {points.length === 0 ? (
        <p className="empty" data-testid="charts-empty">
          No samples over {words.span} yet. The sampler records this DLQ every {refreshSeconds} s once it can see it.
        </p>
      ) : null}
      <div className="grid-2">
        <TimeSeriesChart
          testId="chart-depth"
          label="Depth"
          xs={xs}
          ys={depth}
          format={(v) => formatCount(Math.round(v))}
          xRange={xRange}
          summary={`letters in the DLQ at the end of each bucket, ${covered}; latest ${formatCount(latest)}, peak ${formatCount(peak)}${newest ? `, newest bucket ${newest}` : ""}`}
        />
        <TimeSeriesChart
          testId="chart-inflow"
          label="Inflow"
          style="bars"
          xs={xs}
          ys={inflow}
          format={(v) => formatRate(v)}
          xRange={xRange}
          summary={`letters per minute entering the DLQ, ${covered}`}
        />
      </div>
    </div>
  );
}
