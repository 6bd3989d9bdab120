"use client";

import { TimeSeriesChart } from "@/components/operations/time-series-chart";
import { formatCount } from "@/lib/format";

/** A group's letters per hour of their death time, over its life (uPlot bars, times in UTC). */
export function IssueTrend({ hourly }: { hourly: Array<{ hour: string; letters: number }> }) {
  if (hourly.length === 0) return <p className="hint">No letter of this group is in the index.</p>;
  const xs = hourly.map((h) => Date.parse(h.hour) / 1000);
  const ys = hourly.map((h) => h.letters);
  const total = ys.reduce((a, b) => a + b, 0);
  const peak = Math.max(...ys);
  // One extra hour so the last bar is drawn whole.
  const range: [number, number] = [xs[0], xs[xs.length - 1] + 3600];
  return (
    <TimeSeriesChart
      xs={xs}
      ys={ys}
      label="letters per hour"
      format={(v) => formatCount(v)}
      style="bars"
      height={160}
      testId="issue-trend"
      summary={`${formatCount(total)} letter${total === 1 ? "" : "s"} in ${formatCount(hourly.length)} hour${hourly.length === 1 ? "" : "s"} with letters; peak ${formatCount(peak)} in one hour`}
      xRange={range}
    />
  );
}
