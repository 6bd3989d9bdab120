import { operationRoute } from "@/lib/api/route";
import { getScanOperation } from "@/lib/api/v1";
import { getScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** One scan with its progress (lib/api/v1/scans.ts); an unknown id is 404. */
export const GET = operationRoute(
  getScanOperation,
  { permission: "triage:read", action: "triage.scan_view" },
  async ({ actor, meta, params }) => getScan(actor, meta, { jobId: params.id }),
);
