/** URLs of the redrive pages. Pure. */
const seg = encodeURIComponent;

export const redrivesHref = (connectionId: string, queue: string) => `/dlqs/${seg(connectionId)}/${seg(queue)}/redrive`;
export const newRedriveHref = (connectionId: string, queue: string, query = "") =>
  `${redrivesHref(connectionId, queue)}/new${query}`;

/** The job page; `state` filters its ledger, `after` is the ledger's keyset cursor (a seq). */
export function redriveJobHref(
  connectionId: string,
  queue: string,
  id: string,
  opts: { state?: string | null; after?: number | null } = {},
): string {
  const q = new URLSearchParams();
  if (opts.state) q.set("state", opts.state);
  if (opts.after) q.set("after", String(opts.after));
  const s = q.toString();
  return `${redrivesHref(connectionId, queue)}/${seg(id)}${s ? `?${s}` : ""}`;
}
