/** URLs of the discard pages. Pure. */
import { ledgerJobLinks } from "@/lib/jobs/ledger/ui-links";

const links = ledgerJobLinks("discard");

export const discardsHref = links.list;
export const newDiscardHref = links.create;
/** The job page; `state` filters its ledger, `after` is the ledger's keyset cursor (a seq). */
export const discardJobHref = links.job;

type Search = Record<string, string | string[] | undefined>;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The discard form's address for one letter from its page: its id and its checksum as the page
 * showed it, so that a DLQ never scanned can discard it by id (checksum-guarded).
 */
export function letterDiscardHref(connectionId: string, queue: string, l: { id: string; sha256: string }): string {
  return newDiscardHref(connectionId, queue, `?${new URLSearchParams({ id: l.id, digest: l.sha256 })}`);
}

/** The letter a letterDiscardHref names, when the selection is that one letter and its checksum came with it. */
export function unindexedFromSearch(search: Search, letterIds: string[]): { letterId: string; digest: string } | null {
  const digest = one(search.digest);
  if (letterIds.length !== 1 || !digest || !/^[0-9A-Za-z:_-]{16,200}$/.test(digest)) return null;
  return { letterId: letterIds[0]!, digest };
}
