/**
 * The archive page's filters as they appear in URLs (`/archive?…`, `/api/archive/export?…`), so a
 * view can be pasted and the export link carries the same query. Pure (client-safe). Times are UTC.
 */
import { filterSearch, readFilters, type SearchParams, withQuery } from "@/lib/search-params";

export const ARCHIVE_FIELDS = [
  "connectionId",
  "queue",
  "from",
  "to",
  "actor",
  "reason",
  "state",
  "q",
  "operation",
] as const;
export type ArchiveField = (typeof ARCHIVE_FIELDS)[number];
export type ArchiveParams = Partial<Record<ArchiveField, string>>;

function parseDate(v: string): Date | null {
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : /Z|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}

export interface ParsedArchiveFilter {
  connectionId?: string;
  queue?: string;
  from?: Date;
  to?: Date;
  actor?: string;
  reason?: string;
  state?: "archived" | "restored";
  text?: string;
  /** The discard or repair operation whose letters these are (archived_letters.discard_job_id). */
  operation?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The raw params (for forms and links) and the filter they name, or the reason they are not valid. */
export function parseArchiveParams(
  sp: SearchParams,
): { ok: true; raw: ArchiveParams; filter: ParsedArchiveFilter } | { ok: false; raw: ArchiveParams; message: string } {
  const raw: ArchiveParams = readFilters(sp, ARCHIVE_FIELDS, (v) => v.trim().slice(0, 500));
  const filter: ParsedArchiveFilter = {};
  if (raw.connectionId) filter.connectionId = raw.connectionId;
  if (raw.queue) filter.queue = raw.queue;
  for (const k of ["from", "to"] as const) {
    if (!raw[k]) continue;
    const d = parseDate(raw[k]!);
    if (!d) return { ok: false, raw, message: `"${raw[k]}" is not a date; use YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC).` };
    filter[k] = d;
  }
  if (raw.actor) filter.actor = raw.actor;
  if (raw.reason) filter.reason = raw.reason;
  if (raw.state) {
    if (raw.state !== "archived" && raw.state !== "restored")
      return { ok: false, raw, message: 'State is "archived" or "restored".' };
    filter.state = raw.state;
  }
  if (raw.q) filter.text = raw.q;
  if (raw.operation) {
    if (!UUID.test(raw.operation))
      return { ok: false, raw, message: `"${raw.operation}" is not an operation id (a UUID such as 0b6f…-…).` };
    filter.operation = raw.operation.toLowerCase();
  }
  return { ok: true, raw, filter };
}

const archiveSearch = (raw: ArchiveParams, extra: Array<[string, string]> = []) =>
  filterSearch(raw, ARCHIVE_FIELDS, extra);

export const archiveHref = (raw: ArchiveParams = {}, after?: string | null) =>
  withQuery("/archive", archiveSearch(raw, after ? [["after", after]] : []));
export const archivedLetterHref = (id: string) => `/archive/${encodeURIComponent(id)}`;
export const archiveExportHref = (raw: ArchiveParams, format: "csv" | "json", withPayload = false, ids?: string[]) =>
  withQuery(
    "/api/archive/export",
    archiveSearch(raw, [
      ["format", format],
      ...(withPayload ? ([["payload", "1"]] as Array<[string, string]>) : []),
      ...(ids ?? []).map((id) => ["id", id] as [string, string]),
    ]),
  );
