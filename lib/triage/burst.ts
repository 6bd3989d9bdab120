/**
 * Did a group's letters arrive in a burst? Transient-looking failures that arrive together point to
 * a dependency outage: usually safe to redrive, at a rate, once the dependency is healthy. Pure
 * arithmetic over a histogram, so the index can compute the histogram in SQL.
 */

export interface BurstOptions {
  /** Fewer letters than this are never a burst: too few to tell. Default 10. */
  minLetters?: number;
  /** Share of the letters that must fall inside the window. Default 0.6. */
  share?: number;
  /** Bucket width in ms; inferred from the smallest gap between bucket starts when absent. */
  bucketMs?: number;
  /** Window width in ms; default a tenth of the span, at least one bucket. */
  windowMs?: number;
  /**
   * The time range the histogram covers (e.g. the chart's range). Without it the span runs from the
   * first to the last non-empty bucket, so letters that all arrived in one bucket cannot be judged.
   */
  range?: { from: number; to: number };
  /** A single bucket this many times the median non-empty bucket is a spike. Default 10. */
  spikeFactor?: number;
}

export interface BurstResult {
  burst: boolean;
  /** The burst window, start inclusive, end exclusive (ms); null when there is no burst. */
  from: number | null;
  to: number | null;
  /** Share of the letters inside the densest window (the burst window when there is one). */
  share: number;
}

/** Arrival times (ms) → a histogram for `detectBurst`, buckets aligned to multiples of `bucketMs`. */
export function bucketize(times: number[], bucketMs: number): Array<{ start: number; count: number }> {
  const counts = new Map<number, number>();
  for (const t of times) {
    if (!Number.isFinite(t)) continue;
    const start = Math.floor(t / bucketMs) * bucketMs;
    counts.set(start, (counts.get(start) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => a - b).map(([start, count]) => ({ start, count }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * A burst is either (a) at least `share` of the letters inside a window much shorter than the
 * span (at most a quarter of it), or (b) one bucket holding at least `minLetters` letters and
 * `spikeFactor` times the median non-empty bucket: an outage on top of a steady trickle.
 */
export function detectBurst(
  bucketCounts: Array<{ start: number; count: number }>,
  opts: BurstOptions = {},
): BurstResult {
  const minLetters = opts.minLetters ?? 10;
  const shareNeeded = opts.share ?? 0.6;
  const spikeFactor = opts.spikeFactor ?? 10;
  const buckets = bucketCounts.filter((b) => b.count > 0 && Number.isFinite(b.start)).sort((a, b) => a.start - b.start);
  const total = buckets.reduce((n, b) => n + b.count, 0);
  const none = (share: number): BurstResult => ({ burst: false, from: null, to: null, share });
  if (!buckets.length) return none(0);

  let width = opts.bucketMs ?? Infinity;
  if (!opts.bucketMs)
    for (let i = 1; i < buckets.length; i++) width = Math.min(width, buckets[i].start - buckets[i - 1].start);
  if (!Number.isFinite(width) || width <= 0)
    width = opts.range ? Math.max(1, (opts.range.to - opts.range.from) / 100) : 0;
  const from = opts.range?.from ?? buckets[0].start;
  const to = opts.range?.to ?? buckets[buckets.length - 1].start + width;
  const span = to - from;
  const windowMs = Math.max(width, opts.windowMs ?? span / 10);

  // Densest window: two pointers over the sorted buckets, a bucket counted when it starts inside.
  let best = { sum: 0, i: 0, j: 0 };
  let sum = 0;
  for (let i = 0, j = 0; j < buckets.length; j++) {
    sum += buckets[j].count;
    while (i < j && buckets[j].start - buckets[i].start >= windowMs) sum -= buckets[i++].count;
    if (sum > best.sum) best = { sum, i, j };
  }
  const share = best.sum / total;
  if (total < minLetters || width === 0) return none(share);
  if (share >= shareNeeded && windowMs * 4 <= span) {
    // Report the outage, not the background letters that happened to share its window.
    let { i, j } = best;
    const floor = Math.max(...buckets.slice(i, j + 1).map((b) => b.count)) / 10;
    while (i < j && buckets[i].count < floor) i++;
    while (j > i && buckets[j].count < floor) j--;
    return { burst: true, from: buckets[i].start, to: buckets[j].start + width, share };
  }

  if (buckets.length >= 3) {
    const peak = buckets.reduce((a, b) => (b.count > a.count ? b : a));
    if (peak.count >= minLetters && peak.count >= spikeFactor * median(buckets.map((b) => b.count))) {
      return { burst: true, from: peak.start, to: peak.start + width, share: peak.count / total };
    }
  }
  return none(share);
}
