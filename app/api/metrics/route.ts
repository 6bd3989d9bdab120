import { actorFromBearer, tokenRateLimitOf } from "@/lib/api-tokens";
import { asAppError } from "@/lib/errors";
import { isPersonalToken } from "@/lib/api-tokens/format";
import { getActor, requestMeta } from "@/lib/auth/session";
import { renderMetrics } from "@/lib/operations/metrics";
import { METRICS_UNAUTHORIZED, scraperAccess } from "@/lib/operations/metrics-access";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/**
 * Prometheus text format (lib/operations/metrics.ts): for a scraper with DLQ_METRICS_TOKEN or from
 * a network in DLQ_METRICS_ALLOW, a personal API token whose role has ops:read (the scrape is then
 * attributed to the token and rate-limited like any token request), or a signed-in user with
 * ops:read; anyone else gets 401 and no figures.
 */
export async function GET(req: Request) {
  try {
    const meta = await requestMeta();
    const authorization = req.headers.get("authorization");
    let body: { text: string; contentType: string };
    if (scraperAccess(authorization, meta.ip)) {
      body = await renderMetrics("scraper");
    } else if (isPersonalToken(authorization)) {
      const { actor } = await actorFromBearer(authorization, { meta });
      body = await renderMetrics({ actor, meta });
    } else {
      const actor = await getActor();
      if (!actor) throw METRICS_UNAUTHORIZED();
      body = await renderMetrics({ actor, meta });
    }
    return new Response(body.text, { headers: { "Content-Type": body.contentType, "Cache-Control": "no-store" } });
  } catch (e) {
    const res = errorResponse(e);
    // A personal token over its rate limit: say when to retry, as /api/v1 does.
    const limit = tokenRateLimitOf(asAppError(e));
    if (limit) res.headers.set("Retry-After", String(limit.retryAfterSeconds));
    return res;
  }
}
