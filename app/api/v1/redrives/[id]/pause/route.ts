import { operationRoute } from "@/lib/api/route";
import { asRedrive, pauseRedriveOperation } from "@/lib/api/v1";
import { pauseRedrive } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/** Pauses a redrive (lib/api/v1/redrives.ts); pauseRedrive authorizes again and audits `redrive.pause` under the redrive's id. */
export const POST = operationRoute(
  pauseRedriveOperation,
  { permission: "redrive:sample", action: "redrive.pause" },
  async ({ actor, meta, params }) => asRedrive(await pauseRedrive(actor, meta, { jobId: params.id })),
);
