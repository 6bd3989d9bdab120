/** Query keys for operations data; invalidate by prefix. */
export const opsKeys = {
  all: ["ops"] as const,
  overview: () => [...opsKeys.all, "overview"] as const,
  dlq: (connectionId: string, queue: string, range: string) =>
    [...opsKeys.all, "dlq", connectionId, queue, range] as const,
};
