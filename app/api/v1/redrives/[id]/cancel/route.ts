import { operationRoute } from "@/lib/api/route";
import { asRedrive, cancelRedriveOperation } from "@/lib/api/v1";
import { cancelRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Cancels a redrive (lib/api/v1/redrives.ts); cancelRedrive authorizes again and audits `redrive.cancel` under the redrive's id. */
export const POST = operationRoute(
  cancelRedriveOperation,
  { permission: "redrive:sample", action: "redrive.cancel" },
  async ({ actor, meta, params }) => asRedrive(await cancelRedrive(actor, meta, { jobId: params.id })),
);
