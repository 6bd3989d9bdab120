import { getActor, requestMeta } from "@/lib/auth/session";
import { renderMetrics } from "@/lib/operations/metrics";
import { METRICS_UNAUTHORIZED, scraperAccess } from "@/lib/operations/metrics-access";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/**
 * Prometheus text format (lib/operations/metrics.ts): for a scraper with DLQ_METRICS_TOKEN or from
 * a network in DLQ_METRICS_ALLOW, or a signed-in user with ops:read; anyone else gets 401 and no figures.
 */
export async function GET(req: Request) {
  try {
    const meta = await requestMeta();
    let body: { text: string; contentType: string };
    if (scraperAccess(req.headers.get("authorization"), meta.ip)) {
      body = await renderMetrics("scraper");
    } else {
      const actor = await getActor();
      if (!actor) throw METRICS_UNAUTHORIZED();
      body = await renderMetrics({ actor, meta });
    }
    return new Response(body.text, { headers: { "Content-Type": body.contentType, "Cache-Control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
