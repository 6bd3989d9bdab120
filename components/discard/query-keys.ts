/** Query keys for discard data; invalidate by prefix. */
export const discardKeys = {
  all: ["discard"] as const,
  job: (id: string) => [...discardKeys.all, "job", id] as const,
  page: (id: string, state: string | null, after: number | null) =>
    [...discardKeys.job(id), state ?? "", after ?? 0] as const,
};
