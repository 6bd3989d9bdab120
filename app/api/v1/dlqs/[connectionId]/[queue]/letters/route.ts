import { operationRoute } from "@/lib/api/route";
import { decodeLetterCursor, listDlqLettersOperation, riskyReadRefusal, toLetterPage } from "@/lib/api/v1";
import { openDlq } from "@/lib/dlq/open-dlq";
import { listScans } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/**
 * A page of a DLQ's letters by cursor (lib/api/v1/letters.ts), read as the DLQ page reads it:
 * openDlq authorizes, masks and audits, and reads nothing from a DLQ whose reads cost letters.
 * As on the page, there is no "read it anyway" here: each page would be another read of the broker
 * from its head, spending deliveries on the letters before it. The one confirmed read of such a DLQ
 * is a scan with the risk accepted (POST /api/v1/scans), into the snapshot GET /api/v1/letters serves.
 */
export const GET = operationRoute(
  listDlqLettersOperation,
  { permission: "dlq:browse", action: "dlq.open" },
  async ({ actor, meta, params, query }) => {
    // Next hands a route handler its segments decoded once (pages get them encoded): used as they are.
    const ref = { connectionId: params.connectionId, queue: params.queue };
    const offset = decodeLetterCursor(query.cursor);
    const r = await openDlq(actor, meta, { ...ref, page: 1, pageSize: query.limit, offset });
    if (r.needsConfirmation && r.dlq.readRisk) {
      // The refusal says where the letters can be had without a read: the snapshot, when there is one.
      const snapshot = (await listScans(actor, meta, ref)).some((s) => s.state === "succeeded");
      throw riskyReadRefusal(r.dlq.readRisk, ref, snapshot);
    }
    return toLetterPage(r);
  },
);
