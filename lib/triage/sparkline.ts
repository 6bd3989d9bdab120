/** Geometry of a small arrivals chart (bars per time bucket). Pure. */
export interface Bucket {
  start: string;
  count: number;
}

export interface SparkBar {
  x: number;
  y: number;
  width: number;
  height: number;
  count: number;
  start: string;
}

/**
 * Bars for `buckets` in a width × height box, in time order; gaps between buckets stay empty so
 * a burst looks like one. At most `maxBars` bars: older buckets are merged when there are more.
 */
export function sparkBars(
  buckets: Bucket[],
  width: number,
  height: number,
  maxBars = 48,
): { bars: SparkBar[]; peak: number; total: number } {
  const sorted = [...buckets]
    .filter((b) => !Number.isNaN(Date.parse(b.start)))
    .sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  if (sorted.length === 0) return { bars: [], peak: 0, total: 0 };
  const t0 = Date.parse(sorted[0].start);
  const t1 = Date.parse(sorted[sorted.length - 1].start);
  // A fixed number of slots, so one bucket is one thin bar (at the right: the latest), not a block.
  const slots = Math.max(2, maxBars);
  const span = Math.max(1, t1 - t0);
  const merged: Array<{ count: number; start: string } | null> = Array.from({ length: slots }, () => null);
  for (const b of sorted) {
    const i =
      t1 === t0 ? slots - 1 : Math.min(slots - 1, Math.floor(((Date.parse(b.start) - t0) / span) * (slots - 1) + 0.5));
    const cur = merged[i];
    merged[i] = cur ? { count: cur.count + b.count, start: cur.start } : { count: b.count, start: b.start };
  }
  const peak = Math.max(...merged.map((m) => m?.count ?? 0));
  const total = sorted.reduce((n, b) => n + b.count, 0);
  const slot = width / slots;
  const barW = Math.max(1, slot - (slot > 3 ? 1 : 0));
  const bars: SparkBar[] = [];
  merged.forEach((m, i) => {
    if (!m || m.count <= 0) return;
    const h = Math.max(1.5, (m.count / (peak || 1)) * (height - 1));
    bars.push({
      x: +(i * slot).toFixed(2),
      y: +(height - h).toFixed(2),
      width: +barW.toFixed(2),
      height: +h.toFixed(2),
      count: m.count,
      start: m.start,
    });
  });
  return { bars, peak, total };
}
