/** URL of the group repair page (pure). The query names the group as the redrive form's does: `?group=<key>`. */
export const groupRepairHref = (connectionId: string, queue: string, query = "") =>
  `/dlqs/${encodeURIComponent(connectionId)}/${encodeURIComponent(queue)}/repair${query}`;
