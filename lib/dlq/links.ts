/** URLs of console views; every view is reproducible from its URL. Pure. */
export const PAGE_SIZES = [25, 50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

const seg = encodeURIComponent;

/** Where in a randomly accessible DLQ a page starts; absent fields are the defaults (all partitions, oldest first). */
export interface Position {
  partition?: number | null;
  /** Offset (decimal text) within `partition`. */
  from?: string | null;
  order?: "oldest" | "newest";
}

export function dlqHref(
  connectionId: string,
  queue: string,
  opts: { page?: number; size?: number } & Position = {},
): string {
  const q = new URLSearchParams();
  if (opts.partition !== undefined && opts.partition !== null) q.set("partition", String(opts.partition));
  if (opts.from && opts.partition !== undefined && opts.partition !== null) q.set("from", opts.from);
  if (opts.order === "newest") q.set("order", "newest");
  if (opts.page && opts.page > 1) q.set("page", String(opts.page));
  if (opts.size && opts.size !== DEFAULT_PAGE_SIZE) q.set("size", String(opts.size));
  const qs = q.toString();
  return `/dlqs/${seg(connectionId)}/${seg(queue)}${qs ? `?${qs}` : ""}`;
}

export function letterHref(connectionId: string, queue: string, letterId: string): string {
  return `/dlqs/${seg(connectionId)}/${seg(queue)}/letters/${seg(letterId)}`;
}

export function payloadHref(connectionId: string, queue: string, letterId: string): string {
  return `/api/dlqs/${seg(connectionId)}/${seg(queue)}/letters/${seg(letterId)}/payload`;
}

/** Parses `page` and `size` search params into bounded numbers. */
export function parsePaging(page: unknown, size: unknown): { page: number; size: number } {
  const p = Number.parseInt(String(page ?? "1"), 10);
  const s = Number.parseInt(String(size ?? DEFAULT_PAGE_SIZE), 10);
  return {
    page: Number.isFinite(p) && p >= 1 ? Math.min(p, 10_000) : 1,
    size: Number.isFinite(s) && s >= 1 ? Math.min(s, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE,
  };
}

/**
 * For pages only: Next 16 gives a page's (and layout's, generateMetadata's) params as the URL's
 * percent-encoded segments, so a page decodes them here, once. Route handlers get the same segments
 * already decoded and must not decode again: a second decode would read `%252F` as `/` and
 * `%2525` as `%`, reaching a queue other than the one named (tested in
 * lib/api/v1/path-params.integration.test.ts).
 */
export function decodeParam(v: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(v)) return v;
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
