import { operationRoute } from "@/lib/api/route";
import { asDiscardDetail, getDiscardOperation } from "@/lib/api/v1";
import { getDiscard } from "@/lib/discard/use-cases";

export const dynamic = "force-dynamic";

/** One discard with counts and a ledger page by `after` (lib/api/v1/discards.ts). */
export const GET = operationRoute(
  getDiscardOperation,
  { permission: "discard:read", action: "discard.view" },
  async ({ actor, meta, params, query }) =>
    asDiscardDetail(
      await getDiscard(actor, meta, { jobId: params.id, after: query.after, limit: query.limit, state: query.state }),
    ),
);
