import { operationRoute } from "@/lib/api/route";
import { letterFilterParams, listIndexedLettersOperation, toIndexedLetterPage } from "@/lib/api/v1";
import { parseLetterFilter } from "@/lib/triage/filter-params";
import { listLetters } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/**
 * The filtered set from the triage index by cursor (lib/api/v1/groups.ts). The filter is read as
 * the triage pages read theirs; listLetters evaluates it as the role sees the letters (no masked
 * value can be learnt by filtering) and masks what it answers.
 */
export const GET = operationRoute(
  listIndexedLettersOperation,
  { permission: "triage:read", action: "triage.letters" },
  async ({ actor, meta, query }) =>
    toIndexedLetterPage(
      await listLetters(actor, meta, {
        filter: parseLetterFilter(letterFilterParams(query)),
        after: query.cursor,
        limit: query.limit,
      }),
    ),
);
