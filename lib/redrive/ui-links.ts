/** URLs of the redrive pages. Pure. */
import { ledgerJobLinks } from "@/lib/jobs/ledger/ui-links";

const links = ledgerJobLinks("redrive");

export const redrivesHref = links.list;
export const newRedriveHref = links.create;
/** The job page; `state` filters its ledger, `after` is the ledger's keyset cursor (a seq). */
export const redriveJobHref = links.job;
