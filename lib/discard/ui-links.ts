/** URLs of the discard pages. Pure. */
const seg = encodeURIComponent;

export const discardsHref = (connectionId: string, queue: string) => `/dlqs/${seg(connectionId)}/${seg(queue)}/discard`;
export const newDiscardHref = (connectionId: string, queue: string, query = "") =>
  `${discardsHref(connectionId, queue)}/new${query}`;

export function discardJobHref(
  connectionId: string,
  queue: string,
  id: string,
  opts: { state?: string | null; after?: number | null } = {},
): string {
  const q = new URLSearchParams();
  if (opts.state) q.set("state", opts.state);
  if (opts.after) q.set("after", String(opts.after));
  const s = q.toString();
  return `${discardsHref(connectionId, queue)}/${seg(id)}${s ? `?${s}` : ""}`;
}

type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The discard form's address for one letter from its page: its id and its checksum as the page
 * showed it, so that a DLQ never scanned can discard it by id (checksum-guarded).
 */
export function letterDiscardHref(connectionId: string, queue: string, l: { id: string; sha256: string }): string {
  return newDiscardHref(connectionId, queue, `?${new URLSearchParams({ id: l.id, digest: l.sha256 })}`);
}

/** The letter a letterDiscardHref names, when the selection is that one letter and its checksum came with it. */
export function unindexedFromSearch(search: Search, letterIds: string[]): { letterId: string; digest: string } | null {
  const digest = one(search.digest);
  if (letterIds.length !== 1 || !digest || !/^[0-9A-Za-z:_-]{16,200}$/.test(digest)) return null;
  return { letterId: letterIds[0]!, digest };
}
