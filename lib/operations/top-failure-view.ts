/**
 * A DLQ's top failure as the overview shows it: the largest triage group's class (or reason), its
 * share of the letters, and where the figure comes from. Pure (the list renders it on the client).
 */

export interface TopFailure {
  connectionId: string;
  queue: string;
  /** "exception": `label` is the root cause's class; "reason": why the broker dead-lettered it. */
  basis: "exception" | "reason";
  /** What the triage group page shows this role as the group's name (class or reason). */
  label: string;
  /** The group's normalised message with the role's masking applied; null where none. */
  message: string | null;
  count: number;
  /** Letters the figure counts over (every group of the scan, or the letters sampled). */
  total: number;
  /**
   * "scan": the DLQ's last scan; "index": the indexer keeps its groups current as letters arrive
   * (no scan); "sample": a few letters read where reading costs nothing.
   */
  source: "scan" | "index" | "sample";
  /** When the scan finished, the groups were last brought up to date, or the sample was read, ISO 8601 UTC. */
  at: string;
}

/** One group as it comes from the index or a sample: the fields the choice needs. */
export interface GroupCount {
  key: string;
  basis: "exception" | "reason";
  exceptionClass: string | null;
  reason: string | null;
  count: number;
}

/** The group page's name of a group: the class for exception groups, the reason otherwise. */
export function groupName(g: Pick<GroupCount, "basis" | "exceptionClass" | "reason">): string {
  return g.basis === "exception" ? (g.exceptionClass ?? "(no class)") : (g.reason ?? "No reason given");
}

/**
 * The largest group and the letters counted, ties broken by the group key (the order of the
 * triage page), or null when nothing was counted.
 */
export function largestGroup<G extends GroupCount>(groups: G[]): { top: G; total: number } | null {
  let top: G | null = null;
  let total = 0;
  for (const g of groups) {
    if (g.count <= 0) continue;
    total += g.count;
    if (!top || g.count > top.count || (g.count === top.count && g.key < top.key)) top = g;
  }
  return top ? { top, total } : null;
}

/** "62%", "<1%" for a sliver, never "0%" for a group that has letters, "100%" only for all of them. */
export function formatShare(count: number, total: number): string {
  if (total <= 0 || count <= 0) return "0%";
  if (count >= total) return "100%";
  const p = (count / total) * 100;
  if (p < 1) return "<1%";
  return `${Math.min(99, Math.round(p))}%`;
}
