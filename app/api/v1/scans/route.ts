import { apiJson, operationRoute } from "@/lib/api/route";
import { listScansOperation, startedScanSchema, startScanOperation, toScanPage } from "@/lib/api/v1";
import { listScans, startScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** Scans by cursor (lib/api/v1/scans.ts); one more than the page is read to know whether another follows. */
export const GET = operationRoute(
  listScansOperation,
  { permission: "triage:read", action: "triage.scan_list" },
  async ({ actor, meta, query }) =>
    toScanPage(
      await listScans(actor, meta, {
        connectionId: query.connectionId,
        queue: query.queue,
        before: query.cursor,
        limit: query.limit + 1,
      }),
      query.limit,
    ),
);

/**
 * Starts a scan: 202 with the queued scan, or 200 with the one already queued or running. startScan
 * refuses a risky DLQ without acceptRisk and authorizes acceptRisk as dlq:browse-risky.
 */
export const POST = operationRoute(
  startScanOperation,
  { permission: "triage:scan", action: "triage.scan_start" },
  async ({ actor, meta, body }) => {
    const r = await startScan(actor, meta, body);
    return r.alreadyActive ? apiJson(startedScanSchema.parse(r), { status: 200 }) : r;
  },
);
