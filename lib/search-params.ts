/**
 * A list page's filters as they stand in its URL: read from the page's searchParams (or a route's
 * URLSearchParams) and written back into its links, so a view can be pasted and every link (next
 * page, export, a chip that removes one filter) carries the same filters. Pure (client-safe).
 */
export type SearchParams = Record<string, string | string[] | undefined> | URLSearchParams;

/** The first value of `key`, "" when it is absent. */
export function firstParam(sp: SearchParams, key: string): string {
  const v = sp instanceof URLSearchParams ? sp.get(key) : sp[key];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/** The `fields` the URL sets to something (after `clean`), in their order; the others are absent. */
export function readFilters<F extends string>(
  sp: SearchParams,
  fields: readonly F[],
  clean: (v: string) => string = (v) => v,
): Partial<Record<F, string>> {
  return Object.fromEntries(fields.map((k) => [k, clean(firstParam(sp, k))]).filter(([, v]) => v)) as Partial<
    Record<F, string>
  >;
}

/** The set `fields` of `filters` in their order, then `extra` (a cursor, a format). */
export function filterSearch<F extends string>(
  filters: Partial<Record<F, string>>,
  fields: readonly F[],
  extra: Array<[string, string]> = [],
): URLSearchParams {
  return new URLSearchParams([
    ...fields.filter((k) => filters[k]).map((k): [string, string] => [k, filters[k]!]),
    ...extra,
  ]);
}

/** `path`, with `?` and the query when there is one. */
export function withQuery(path: string, query: URLSearchParams): string {
  const s = query.toString();
  return s ? `${path}?${s}` : path;
}
