import { getDiscard } from "@/lib/discard/use-cases";
import { sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One discard (poll it for progress) with counts and a ledger page: ?after=<seq>&limit=&state=. */
export const GET = sessionRoute<{ id: string }>(({ actor, meta, params, search }) =>
  getDiscard(actor, meta, {
    jobId: params.id,
    after: search.get("after") ?? undefined,
    limit: search.get("limit") ?? undefined,
    state: search.get("state") || undefined,
  }),
);
