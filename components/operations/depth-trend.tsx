import { formatCount } from "@/lib/format";
import { sparkBars } from "@/lib/triage/sparkline";

const W = 90;
const H = 20;

/**
 * A DLQ's depth minute by minute over the last hour (60 slots on a fixed axis, newest at the
 * right), as small bars. `trend[59]` is the minute the overview was read in, about `endAt`; null: no sample.
 */
export function DepthTrend({ trend, endAt }: { trend: Array<number | null> | null; endAt: string }) {
  const points = (trend ?? []).filter((d) => d !== null).length;
  if (!trend || points === 0) {
    return (
      <span className="muted" data-testid="dlq-trend" data-points={0} title="No samples in the last hour">
        —
      </span>
    );
  }
  const end = new Date(endAt).getTime();
  // Every minute is a bucket (null as 0), so the axis is the whole hour whatever was sampled.
  const buckets = trend.map((d, i) => ({
    start: new Date(end - (trend.length - 1 - i) * 60_000).toISOString(),
    count: d ?? 0,
  }));
  const { bars, peak } = sparkBars(buckets, W, H, trend.length);
  const known = trend.filter((d): d is number => d !== null);
  const label = `Depth over the last hour, per minute (sampler): latest ${formatCount(known[known.length - 1])}, peak ${formatCount(peak)}, ${points} of ${trend.length} minutes sampled`;
  return (
    <svg
      className="spark trend"
      width={W}
      height={H}
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={label}
      data-testid="dlq-trend"
      data-points={points}
    >
      <title>{label}</title>
      <line x1={0} y1={H - 0.5} x2={W} y2={H - 0.5} className="spark-axis" />
      {bars.map((b) => (
        <rect key={b.start} x={b.x} y={b.y} width={b.width} height={b.height} className="spark-bar" />
      ))}
    </svg>
  );
}
