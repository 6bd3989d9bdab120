import { formatCount, formatUtc } from "@/lib/format";
import { sparkBars, type Bucket } from "@/lib/triage/sparkline";

/**
 * A group's arrivals over time as inline SVG bars (no chart library, no script): one bar per time
 * bucket, burst window shaded. The label states the numbers for screen readers.
 */
export function ArrivalsChart({
  buckets,
  bucketSeconds,
  burst,
  width = 120,
  height = 22,
}: {
  buckets: Bucket[];
  bucketSeconds: number;
  burst?: { burst: boolean; from: string | null; to: string | null } | null;
  width?: number;
  height?: number;
}) {
  const { bars, peak, total } = sparkBars(buckets, width, height);
  if (!bars.length) return <span className="muted">—</span>;
  const first = bars[0].start;
  const last = bars[bars.length - 1].start;
  const per =
    bucketSeconds >= 3600
      ? `${Math.round(bucketSeconds / 3600)} h`
      : bucketSeconds >= 60
        ? `${Math.round(bucketSeconds / 60)} min`
        : `${bucketSeconds} s`;
  const label = `${formatCount(total)} arrivals from ${formatUtc(first)} to ${formatUtc(last)}; peak ${formatCount(peak)} per ${per}${burst?.burst ? "; a burst" : ""}`;
  const inBurst = (s: string) => !!burst?.burst && !!burst.from && !!burst.to && s >= burst.from && s <= burst.to;
  return (
    <svg
      className="spark"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
    >
      <title>{label}</title>
      <line x1={0} y1={height - 0.5} x2={width} y2={height - 0.5} className="spark-axis" />
      {bars.map((b) => (
        <rect
          key={b.start}
          x={b.x}
          y={b.y}
          width={b.width}
          height={b.height}
          className={inBurst(b.start) ? "spark-bar spark-burst" : "spark-bar"}
        />
      ))}
    </svg>
  );
}
