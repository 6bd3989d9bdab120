/** Query keys for redrive data; invalidate by prefix. */
export const redriveKeys = {
  all: ["redrive"] as const,
  job: (id: string) => [...redriveKeys.all, "job", id] as const,
  page: (id: string, state: string | null, after: number | null) =>
    [...redriveKeys.job(id), state ?? "", after ?? 0] as const,
};
