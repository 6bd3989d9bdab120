import { operationRoute } from "@/lib/api/route";
import { asRedrive, startRedriveBulkOperation } from "@/lib/api/v1";
import { startBulk } from "@/lib/redrive/use-cases";

export const dynamic = "force-dynamic";

/**
 * Stage 2 (lib/api/v1/redrives.ts). The guard is redrive:bulk; an `overrideReason` also needs
 * redrive:override, which startBulk checks (and audits) before it reads anything else.
 */
export const POST = operationRoute(
  startRedriveBulkOperation,
  { permission: "redrive:bulk", action: "redrive.bulk_start" },
  async ({ actor, meta, params, body }) => asRedrive(await startBulk(actor, meta, { ...body, jobId: params.id })),
);
