import { parseLetterFilter } from "@/lib/triage/filter-params";
import { LETTER_PAGE_SIZE } from "@/lib/triage/queries";
import { listLetters } from "@/lib/triage/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** The filtered set: filters as in parseLetterFilter, &after=<cursor>&limit= → { letters, count, nextCursor }. */
export const GET = sessionRoute(({ actor, meta, search }) =>
  listLetters(actor, meta, {
    filter: parseLetterFilter(search),
    after: search.get("after"),
    limit: Number(search.get("limit") ?? LETTER_PAGE_SIZE),
  }),
);
