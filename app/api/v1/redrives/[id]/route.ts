import { operationRoute } from "@/lib/api/route";
import { asRedriveDetail, getRedriveOperation } from "@/lib/api/v1";
import { getRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** One redrive with counts and a ledger page by `after` (lib/api/v1/redrives.ts): what a script polls. */
export const GET = operationRoute(
  getRedriveOperation,
  { permission: "redrive:read", action: "redrive.view" },
  async ({ actor, meta, params, query }) =>
    asRedriveDetail(
      await getRedrive(actor, meta, { jobId: params.id, after: query.after, limit: query.limit, state: query.state }),
    ),
);
