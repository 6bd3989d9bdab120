/** Query keys for triage data; invalidate by prefix. */
export const triageKeys = {
  all: ["triage"] as const,
  scans: () => [...triageKeys.all, "scan"] as const,
  scan: (id: string) => [...triageKeys.scans(), id] as const,
};
