import { listScans, startScan } from "@/lib/triage/use-cases";
import { jsonBody, ok, sessionRoute } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Scans, newest first: ?connectionId=&queue= (both optional). */
export const GET = sessionRoute(({ actor, meta, search }) =>
  listScans(actor, meta, {
    connectionId: search.get("connectionId") ?? undefined,
    queue: search.get("queue") ?? undefined,
  }),
);

/** Starts a scan: { connectionId, queue, acceptRisk? } → 202 { scan, alreadyActive }. */
export const POST = sessionRoute(async ({ req, actor, meta }) => {
  const b = await jsonBody(req).catch(() => ({}) as Record<string, unknown>);
  const r = await startScan(actor, meta, {
    connectionId: String(b.connectionId ?? ""),
    queue: String(b.queue ?? ""),
    acceptRisk: b.acceptRisk === true,
  });
  return ok(r, r.alreadyActive ? 200 : 202);
});
