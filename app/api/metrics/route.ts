import { getActor, requestMeta } from "@/lib/auth/session";
import { METRICS_UNAUTHORIZED, renderMetrics, scraperTokenMatches } from "@/lib/operations/metrics";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** Prometheus text format of every DLQ's last sampled figures: a scraper with DLQ_METRICS_TOKEN, or a signed-in user with ops:read. */
export async function GET(req: Request) {
  try {
    let body: string;
    if (scraperTokenMatches(req.headers.get("authorization"))) {
      body = await renderMetrics("scraper");
    } else {
      const actor = await getActor();
      if (!actor) throw METRICS_UNAUTHORIZED();
      body = await renderMetrics({ actor, meta: await requestMeta() });
    }
    return new Response(body, { headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" } });
  } catch (e) {
    return errorResponse(e);
  }
}
