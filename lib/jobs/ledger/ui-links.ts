/** URLs of one kind of ledger job's pages under its DLQ (`segment`: "redrive", "discard"). Pure (client-safe). */
const seg = encodeURIComponent;

export function ledgerJobLinks(segment: string) {
  /** The kind's jobs of one DLQ. */
  const list = (connectionId: string, queue: string) => `/dlqs/${seg(connectionId)}/${seg(queue)}/${segment}`;
  return {
    list,
    /** The form that starts one; `query` is appended as given ("?…"). */
    create: (connectionId: string, queue: string, query = "") => `${list(connectionId, queue)}/new${query}`,
    /** The job page; `state` filters its ledger, `after` is the ledger's keyset cursor (a seq). */
    job: (
      connectionId: string,
      queue: string,
      id: string,
      opts: { state?: string | null; after?: number | null } = {},
    ): string => {
      const q = new URLSearchParams();
      if (opts.state) q.set("state", opts.state);
      if (opts.after) q.set("after", String(opts.after));
      const s = q.toString();
      return `${list(connectionId, queue)}/${seg(id)}${s ? `?${s}` : ""}`;
    },
  };
}
