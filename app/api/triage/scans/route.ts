import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { jsonBody, ok, requireSameOrigin } from "@/lib/triage/http";
import { listScans, startScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** Scans, newest first: ?connectionId=&queue= (both optional). */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const actor = await requireActor();
    return ok(
      await listScans(actor, await requestMeta(), {
        connectionId: p.get("connectionId") ?? undefined,
        queue: p.get("queue") ?? undefined,
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}

/** Starts a scan: { connectionId, queue, acceptRisk? } → 202 { scan, alreadyActive }. */
export async function POST(req: Request) {
  try {
    requireSameOrigin(req);
    const actor = await requireActor();
    const b = await jsonBody(req).catch(() => ({}) as Record<string, unknown>);
    const r = await startScan(actor, await requestMeta(), {
      connectionId: String(b.connectionId ?? ""),
      queue: String(b.queue ?? ""),
      acceptRisk: b.acceptRisk === true,
    });
    return ok(r, r.alreadyActive ? 200 : 202);
  } catch (e) {
    return errorResponse(e);
  }
}
