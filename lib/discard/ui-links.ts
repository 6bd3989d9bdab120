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
