/**
 * Pages over a topic's offsets. Pure. A page's `offset`/`limit` count positions in one order:
 * - all partitions, oldest first: partition 0 from its start offset, then partition 1, ...;
 * - all partitions, newest first: the last partition from its end backwards, then the one before;
 * - one partition: from `fromOffset` (default its start; with "newest", its end) in the chosen order.
 * A position is a distance in offsets, so it is exact and seekable; where offsets have gaps
 * (compaction, transaction markers) a page holds fewer letters than `limit`.
 */
export interface PartitionRange {
  partition: number;
  start: bigint;
  end: bigint;
}

export interface Segment {
  partition: number;
  /** Offsets [from, to) of this partition, read forwards. */
  from: bigint;
  to: bigint;
  positionOf(offset: bigint): number;
}

interface Run {
  partition: number;
  lo: bigint;
  hi: bigint;
  desc: boolean;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

export function runsOf(
  partitions: PartitionRange[],
  opts: { partition?: number; fromOffset?: bigint; order: "oldest" | "newest" },
): Run[] {
  const desc = opts.order === "newest";
  if (opts.partition !== undefined) {
    const p = partitions.find((x) => x.partition === opts.partition);
    if (!p) return [];
    if (!desc)
      return [{ partition: p.partition, lo: min(max(p.start, opts.fromOffset ?? p.start), p.end), hi: p.end, desc }];
    const anchor = opts.fromOffset === undefined ? p.end : min(opts.fromOffset + 1n, p.end);
    return [{ partition: p.partition, lo: p.start, hi: max(p.start, anchor), desc }];
  }
  const sorted = [...partitions].sort((a, b) => a.partition - b.partition);
  return (desc ? sorted.reverse() : sorted).map((p) => ({ partition: p.partition, lo: p.start, hi: p.end, desc }));
}

export function planPage(
  partitions: PartitionRange[],
  opts: { partition?: number; fromOffset?: bigint; order: "oldest" | "newest"; offset: number; limit: number },
): { segments: Segment[]; hasMore: boolean; size: number } {
  const runs = runsOf(partitions, opts);
  const segments: Segment[] = [];
  const pageEnd = opts.offset + opts.limit;
  let base = 0;
  for (const r of runs) {
    const len = Number(r.hi - r.lo);
    const k0 = Math.max(opts.offset, base) - base;
    const k1 = Math.min(pageEnd, base + len) - base;
    if (k1 > k0) {
      const b = base;
      segments.push(
        r.desc
          ? {
              partition: r.partition,
              from: r.hi - BigInt(k1),
              to: r.hi - BigInt(k0),
              positionOf: (o) => b + Number(r.hi - 1n - o),
            }
          : {
              partition: r.partition,
              from: r.lo + BigInt(k0),
              to: r.lo + BigInt(k1),
              positionOf: (o) => b + Number(o - r.lo),
            },
      );
    }
    base += len;
  }
  return { segments, hasMore: pageEnd < base, size: base };
}
