/**
 * The triage page's URL: grouping key, filters, cursor and sort, parsed and built. Every triage view
 * is reproducible from its URL. Pure (client-safe): no server-only imports. Filter names match
 * `parseLetterFilter` in ./http.ts, so the export link carries the same query string.
 */
import { z } from "zod";
import type { LetterFilter } from "./queries";

export const BASE_GROUP_BYS = ["group", "origin", "reason", "class"] as const;
export type GroupBy = (typeof BASE_GROUP_BYS)[number] | `header:${string}`;

export const GROUP_SORTS = ["count", "last", "first", "label"] as const;
export type GroupSortKey = (typeof GROUP_SORTS)[number];
export interface GroupSort {
  key: GroupSortKey;
  dir: "asc" | "desc";
}
export const DEFAULT_SORT: GroupSort = { key: "count", dir: "desc" };

export interface TriageView {
  by: GroupBy;
  group: string | null;
  exceptionClass: string | null;
  reason: string | null;
  origin: string | null;
  /** ISO 8601, UTC. */
  from: string | null;
  to: string | null;
  header: { name: string; value: string } | null;
  q: string | null;
  gone: boolean;
  after: string | null;
  sort: GroupSort;
}

export const EMPTY_VIEW: TriageView = {
  by: "group",
  group: null,
  exceptionClass: null,
  reason: null,
  origin: null,
  from: null,
  to: null,
  header: null,
  q: null,
  gone: false,
  after: null,
  sort: DEFAULT_SORT,
};

type Search = Record<string, string | string[] | undefined>;

const once = (what: string) => ({ error: `Give ${what} once, as plain text.` });
const blank = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const text = (what: string, max: number) =>
  z.preprocess(blank, z.string(once(what)).max(max, `${what} is longer than ${max} characters.`).optional());
const when = (what: string) =>
  z.preprocess(
    blank,
    z
      .string(once(what))
      .refine(
        (v) => !Number.isNaN(Date.parse(v)),
        `"${what}" must be a date and time in UTC, such as 2025-01-31T14:05:00Z.`,
      )
      .transform((v) => new Date(v).toISOString())
      .optional(),
  );

const triageParamsSchema = z
  .object({
    by: z.preprocess(
      blank,
      z
        .string(once("by"))
        .refine(
          (v) => (BASE_GROUP_BYS as readonly string[]).includes(v) || /^header:[^\s]{1,200}$/.test(v),
          'Group by must be "group", "origin", "reason", "class" or "header:<name>".',
        )
        .optional(),
    ),
    group: text("group", 200),
    class: text("class", 500),
    reason: text("reason", 200),
    origin: text("origin", 500),
    from: when("from"),
    to: when("to"),
    header: z.preprocess(
      blank,
      z
        .string(once("header"))
        .max(1200)
        .refine((v) => v.indexOf(":") > 0, 'The header filter must look like "name:value".')
        .optional(),
    ),
    q: text("q", 500),
    gone: z.preprocess(blank, z.enum(["1", "0"], { error: 'gone must be "1" or "0".' }).optional()),
    after: z.preprocess(
      blank,
      z
        .string(once("after"))
        .regex(/^[A-Za-z0-9_-]{1,400}$/, "The page cursor is not valid; start again from the first page.")
        .optional(),
    ),
    sort: z.preprocess(
      blank,
      z
        .string(once("sort"))
        .regex(
          /^-?(count|last|first|label)$/,
          'Sort must be one of count, last, first, label (with "-" for descending).',
        )
        .optional(),
    ),
  })
  .refine((p) => !p.from || !p.to || p.from <= p.to, {
    message: "The time range ends before it starts: swap from and to.",
    path: ["to"],
  });

export function parseSort(s: string | undefined | null): GroupSort {
  if (!s) return DEFAULT_SORT;
  const desc = s.startsWith("-");
  const key = (desc ? s.slice(1) : s) as GroupSortKey;
  return (GROUP_SORTS as readonly string[]).includes(key) ? { key, dir: desc ? "desc" : "asc" } : DEFAULT_SORT;
}

function sortParam(s: GroupSort): string | null {
  if (s.key === DEFAULT_SORT.key && s.dir === DEFAULT_SORT.dir) return null;
  return `${s.dir === "desc" ? "-" : ""}${s.key}`;
}

/** The triage page's search params, validated; a bad URL gets a message, never a crash. */
export function parseTriageParams(sp: Search): { ok: true; value: TriageView } | { ok: false; message: string } {
  const pick = (k: string) => sp[k];
  const r = triageParamsSchema.safeParse(
    Object.fromEntries(
      ["by", "group", "class", "reason", "origin", "from", "to", "header", "q", "gone", "after", "sort"].map((k) => [
        k,
        pick(k),
      ]),
    ),
  );
  if (!r.success) return { ok: false, message: r.error.issues.map((i) => i.message).join(" ") };
  const d = r.data;
  let header: TriageView["header"] = null;
  if (d.header) {
    const i = d.header.indexOf(":");
    header = { name: d.header.slice(0, i), value: d.header.slice(i + 1) };
  }
  return {
    ok: true,
    value: {
      by: (d.by ?? "group") as GroupBy,
      group: d.group ?? null,
      exceptionClass: d.class ?? null,
      reason: d.reason ?? null,
      origin: d.origin ?? null,
      from: d.from ?? null,
      to: d.to ?? null,
      header,
      q: d.q?.trim() || null,
      gone: d.gone === "1",
      after: d.after ?? null,
      sort: parseSort(d.sort),
    },
  };
}

/** The filter part of a view as query pairs, in a stable order (shared by page and export links). */
export function filterPairs(v: Partial<TriageView>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (v.group) out.push(["group", v.group]);
  if (v.exceptionClass) out.push(["class", v.exceptionClass]);
  if (v.reason) out.push(["reason", v.reason]);
  if (v.origin) out.push(["origin", v.origin]);
  if (v.from) out.push(["from", v.from]);
  if (v.to) out.push(["to", v.to]);
  if (v.header) out.push(["header", `${v.header.name}:${v.header.value}`]);
  if (v.q) out.push(["q", v.q]);
  if (v.gone) out.push(["gone", "1"]);
  return out;
}

const seg = encodeURIComponent;

export function triageBase(connectionId: string, queue: string): string {
  return `/dlqs/${seg(connectionId)}/${seg(queue)}/triage`;
}

/** The URL of a triage view. Changing a filter should drop `after` (the cursor belongs to the old set): use `withFilter`. */
export function triageHref(connectionId: string, queue: string, v: Partial<TriageView> = {}): string {
  const q = new URLSearchParams();
  if (v.by && v.by !== "group") q.set("by", v.by);
  for (const [k, val] of filterPairs(v)) q.set(k, val);
  const s = v.sort ? sortParam(v.sort) : null;
  if (s) q.set("sort", s);
  if (v.after) q.set("after", v.after);
  const qs = q.toString();
  return `${triageBase(connectionId, queue)}${qs ? `?${qs}` : ""}`;
}

/** The view with some filters changed and paging reset to the first page. */
export function withFilter(v: TriageView, change: Partial<TriageView>): TriageView {
  return { ...v, ...change, after: null };
}

/** GET /api/triage/export for the view's filtered set. */
export function exportHref(
  connectionId: string,
  queue: string,
  v: Partial<TriageView>,
  format: "csv" | "json",
  withPayload = false,
): string {
  const q = new URLSearchParams([
    ["format", format],
    ["connectionId", connectionId],
    ["queue", queue],
    ...filterPairs(v),
  ]);
  if (withPayload) q.set("payload", "1");
  return `/api/triage/export?${q}`;
}

export function toLetterFilter(connectionId: string, queue: string, v: TriageView): LetterFilter {
  return {
    connectionId,
    queue,
    groupKey: v.group ?? undefined,
    exceptionClass: v.exceptionClass ?? undefined,
    reason: v.reason ?? undefined,
    origin: v.origin ?? undefined,
    from: v.from ? new Date(v.from) : undefined,
    to: v.to ? new Date(v.to) : undefined,
    header: v.header ?? undefined,
    text: v.q ?? undefined,
    includeGone: v.gone,
  };
}

export interface AppliedFilter {
  key: "group" | "class" | "reason" | "origin" | "from" | "to" | "header" | "q" | "gone";
  label: string;
  value: string;
  /** The view without this filter. */
  without: TriageView;
}

/** The filters in force, each with the view that removes it (for the "×" on each chip). */
export function appliedFilters(v: TriageView, groupLabel?: (key: string) => string | undefined): AppliedFilter[] {
  const out: AppliedFilter[] = [];
  const add = (key: AppliedFilter["key"], label: string, value: string, change: Partial<TriageView>) =>
    out.push({ key, label, value, without: withFilter(v, change) });
  if (v.group) add("group", "Group", groupLabel?.(v.group) ?? v.group, { group: null });
  if (v.exceptionClass) add("class", "Exception", v.exceptionClass, { exceptionClass: null });
  if (v.reason) add("reason", "Reason", v.reason, { reason: null });
  if (v.origin) add("origin", "Origin", v.origin, { origin: null });
  if (v.from) add("from", "From", v.from, { from: null });
  if (v.to) add("to", "To", v.to, { to: null });
  if (v.header) add("header", "Header", `${v.header.name} = ${v.header.value}`, { header: null });
  if (v.q) add("q", "Text", v.q, { q: null });
  if (v.gone) add("gone", "Including", "gone letters", { gone: false });
  return out;
}

/** For a group-by value row: the filter change that selects it (null values cannot be filtered). */
export function filterForValue(by: GroupBy, value: string | null): Partial<TriageView> | null {
  if (value === null) return null;
  if (by === "origin") return { origin: value };
  if (by === "reason") return { reason: value };
  if (by === "class") return { exceptionClass: value };
  if (by.startsWith("header:")) return { header: { name: by.slice(7), value } };
  return { group: value };
}

/** `<input type="datetime-local">` value (read as UTC) → ISO 8601, or null when blank/invalid. */
export function utcInputToIso(v: string): string | null {
  if (!v.trim()) return null;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/.exec(v.trim());
  if (!m) return null;
  const d = new Date(`${m[1]}T${m[2]}${m[3] ?? ":00"}Z`);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** ISO 8601 → `<input type="datetime-local">` value in UTC (seconds kept only when non-zero). */
export function isoToUtcInput(iso: string | null): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const s = d.toISOString();
  return s.slice(17, 19) === "00" ? s.slice(0, 16) : s.slice(0, 19);
}

export interface SortableGroup {
  label: string;
  count: number;
  firstAt: string;
  lastAt: string;
}

/** Groups in the view's order; ties fall back to count (desc), then label, so the order is stable. */
export function sortGroups<G extends SortableGroup>(groups: G[], sort: GroupSort): G[] {
  const sign = sort.dir === "asc" ? 1 : -1;
  const by = (g: G): number | string =>
    sort.key === "count"
      ? g.count
      : sort.key === "last"
        ? Date.parse(g.lastAt)
        : sort.key === "first"
          ? Date.parse(g.firstAt)
          : g.label.toLowerCase();
  return [...groups].sort((a, b) => {
    const x = by(a);
    const y = by(b);
    if (x < y) return -sign;
    if (x > y) return sign;
    return b.count - a.count || a.label.localeCompare(b.label);
  });
}

/** The next sort when a column header is clicked: same column flips; a new one starts descending (label ascending). */
export function nextSort(current: GroupSort, key: GroupSortKey): GroupSort {
  if (current.key === key) return { key, dir: current.dir === "asc" ? "desc" : "asc" };
  return { key, dir: key === "label" ? "asc" : "desc" };
}
