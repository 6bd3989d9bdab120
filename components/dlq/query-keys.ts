/** Query keys for DLQ data; invalidate by prefix. */
export const dlqKeys = {
  all: ["dlqs"] as const,
  list: () => [...dlqKeys.all, "list"] as const,
};
