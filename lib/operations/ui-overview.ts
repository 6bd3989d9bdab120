/**
 * The DLQ overview's rows: the broker's live listing merged with the sampler's figures (by
 * connection id + DLQ name), and their order. Pure (no server-only): the list sorts on the client.
 */
import type { DlqOverviewRow } from "./queries";

/** What the live listing gives for one DLQ (structural, so this file needs no listing types). */
export interface LiveDlq {
  connectionId: string;
  name: string;
  depth: number | null;
}

export interface OverviewItem<L extends LiveDlq> {
  key: string;
  connectionId: string;
  name: string;
  /** The broker's listing now; null when the DLQ is known only from the sampler (its broker is unreachable, or it is gone). */
  live: L | null;
  /** The sampler's last figures; null: not sampled yet. */
  ops: DlqOverviewRow | null;
  /** Place in the needs-attention order (the overview's order); unsampled DLQs come after every sampled one. */
  attention: number;
}

export const dlqKey = (connectionId: string, name: string) => `${connectionId}\u0000${name}`;

/**
 * Every DLQ the listing or the sampler knows, once. `ops` comes needs-attention first; the result
 * keeps that order, then the DLQs not sampled yet in the listing's order.
 */
export function mergeOverview<L extends LiveDlq>(live: L[], ops: DlqOverviewRow[]): Array<OverviewItem<L>> {
  const liveBy = new Map(live.map((l) => [dlqKey(l.connectionId, l.name), l]));
  const seen = new Set<string>();
  const out: Array<OverviewItem<L>> = [];
  ops.forEach((o, i) => {
    const key = dlqKey(o.connectionId, o.queue);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ key, connectionId: o.connectionId, name: o.queue, live: liveBy.get(key) ?? null, ops: o, attention: i });
  });
  live.forEach((l, i) => {
    const key = dlqKey(l.connectionId, l.name);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ key, connectionId: l.connectionId, name: l.name, live: l, ops: null, attention: ops.length + i });
  });
  return out;
}

export const SORT_KEYS = [
  "attention",
  "name",
  "connection",
  "depth",
  "inflow",
  "oldest",
  "lost",
  "owner",
  "findings",
  "alert",
] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = "asc" | "desc";

/** The direction a column sorts in when first chosen: the most pressing first. */
export const FIRST_DIR: Record<SortKey, SortDir> = {
  attention: "asc",
  name: "asc",
  connection: "asc",
  depth: "desc",
  inflow: "desc",
  oldest: "desc",
  lost: "asc",
  owner: "asc",
  findings: "desc",
  alert: "desc",
};

const SEVERITY: Record<string, number> = { critical: 3, warning: 2, info: 1 };
const time = (iso: string | null | undefined) => (iso ? new Date(iso).getTime() : null);

/** The value a column sorts by; null sorts last whichever the direction. */
export function sortValue<L extends LiveDlq>(
  item: OverviewItem<L>,
  key: SortKey,
  connectionName: (id: string) => string,
  now: number,
): number | string | null {
  const o = item.ops;
  switch (key) {
    case "attention":
      return item.attention;
    case "name":
      return item.name;
    case "connection":
      return connectionName(item.connectionId);
    case "depth":
      return item.live?.depth ?? o?.depth ?? null;
    case "inflow":
      return o?.inflowPerMin ?? null;
    case "oldest": {
      const t = o && o.depth !== 0 ? time(o.oldestAt) : null;
      return t === null ? null : now - t;
    }
    case "lost":
      return o && o.depth !== 0 && !o.missingSince ? time(o.deadlineAt) : null;
    case "owner":
      return o?.owner?.team ?? null;
    case "findings":
      return o && o.openFindings > 0 ? (SEVERITY[o.worstFinding ?? ""] ?? 0) * 1_000_000 + o.openFindings : null;
    case "alert":
      return time(o?.lastAlertAt);
  }
}

/** A stable sort by one column; ties keep the needs-attention order. */
export function sortOverview<L extends LiveDlq>(
  items: Array<OverviewItem<L>>,
  key: SortKey,
  dir: SortDir,
  connectionName: (id: string) => string = (id) => id,
  now = Date.now(),
): Array<OverviewItem<L>> {
  const sign = dir === "asc" ? 1 : -1;
  const keyed = items.map((item) => ({ item, v: sortValue(item, key, connectionName, now) }));
  keyed.sort((a, b) => {
    if (a.v === null || b.v === null) {
      if (a.v !== b.v) return a.v === null ? 1 : -1;
    } else if (a.v !== b.v) {
      const c =
        typeof a.v === "string" && typeof b.v === "string"
          ? a.v.localeCompare(b.v, "en", { sensitivity: "base", numeric: true })
          : (a.v as number) - (b.v as number);
      if (c !== 0) return c * sign;
    }
    return a.item.attention - b.item.attention;
  });
  return keyed.map((k) => k.item);
}

/** `?sort=lost&dir=asc` → a valid sort; anything else is the default (needs attention first). */
export function parseSort(sort: unknown, dir: unknown): { key: SortKey; dir: SortDir } {
  const key =
    typeof sort === "string" && (SORT_KEYS as readonly string[]).includes(sort) ? (sort as SortKey) : "attention";
  const d = dir === "asc" || dir === "desc" ? dir : FIRST_DIR[key];
  return { key, dir: d };
}

/**
 * The query string for a sort, a filter, whether gone DLQs show and whether every row shows (not
 * only the first OVERVIEW_PAGE); defaults are left out.
 */
export function overviewQuery(s: { key: SortKey; dir: SortDir; q: string; gone?: boolean; all?: boolean }): string {
  const p = new URLSearchParams();
  if (s.key !== "attention") {
    p.set("sort", s.key);
    if (s.dir !== FIRST_DIR[s.key]) p.set("dir", s.dir);
  }
  if (s.q.trim()) p.set("q", s.q);
  if (s.gone) p.set("gone", "1");
  if (s.all) p.set("all", "1");
  const qs = p.toString();
  return qs ? `?${qs}` : "";
}

/**
 * Rows the overview renders before "Show all": the first ones in the chosen order (needs attention
 * first by default). A thousand rows cost seconds of rendering on every load; the filter and the
 * counts still cover every DLQ.
 */
export const OVERVIEW_PAGE = 100;
