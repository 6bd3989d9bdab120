/**
 * What a chart of one range shows, in words that match its axis: the axis always spans the whole
 * range (so "over the last day" is a day wide), and where samples cover less of it, the caption
 * says since when. Pure.
 */
import { formatUtc } from "@/lib/format";

export interface RangeSpec {
  span: string;
  bucket: string;
  spanSeconds: number;
  bucketSeconds: number;
}

export const CHART_RANGE_WORDS: Record<string, RangeSpec> = {
  hour: { span: "the last hour", bucket: "per minute", spanSeconds: 3600, bucketSeconds: 60 },
  day: { span: "the last day", bucket: "per 15 minutes", spanSeconds: 86_400, bucketSeconds: 900 },
  week: { span: "the last week", bucket: "per hour", spanSeconds: 7 * 86_400, bucketSeconds: 3600 },
};

export function rangeSpec(range: string): RangeSpec {
  return CHART_RANGE_WORDS[range] ?? CHART_RANGE_WORDS.day;
}

/** The x axis in epoch seconds: the whole range up to `nowMs`, and at least up to the newest bucket's end. */
export function chartAxis(spec: RangeSpec, xs: number[], nowMs: number): [number, number] {
  const newest = xs.length ? xs[xs.length - 1] + spec.bucketSeconds : 0;
  const to = Math.max(Math.floor(nowMs / 1000), newest);
  return [to - spec.spanSeconds, to];
}

/**
 * "per 15 minutes over the last day", plus "; samples since 2026-12-05 03:00:00 UTC" when the first
 * bucket starts later than one bucket into the range (a sampler that started within it).
 */
export function rangeWords(spec: RangeSpec, xs: number[], nowMs: number): string {
  const words = `${spec.bucket} over ${spec.span}`;
  if (!xs.length) return words;
  const [from] = chartAxis(spec, xs, nowMs);
  return xs[0] > from + spec.bucketSeconds ? `${words}; samples since ${formatUtc(xs[0] * 1000)}` : words;
}
