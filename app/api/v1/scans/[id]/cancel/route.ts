import { operationRoute } from "@/lib/api/route";
import { cancelScanOperation } from "@/lib/api/v1";
import { cancelScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** Asks a scan to stop (lib/api/v1/scans.ts); cancelScan authorizes and audits `triage.scan_cancel`. */
export const POST = operationRoute(
  cancelScanOperation,
  { permission: "triage:scan", action: "triage.scan_cancel" },
  async ({ actor, meta, params }) => cancelScan(actor, meta, { jobId: params.id }),
);
