import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { startBulk } from "@/lib/redrive/use-cases";
import { jsonBody, ok, requireSameOrigin } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/**
 * Starts stage 2: {} after a clean sample; { continueAnywayReason } after an inconclusive one (the
 * sample's copies were not seen taken by a reader); { overrideReason } (admin) after one that came back. → RedriveView.
 */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    requireSameOrigin(req);
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await startBulk(actor, await requestMeta(), { ...(await jsonBody(req).catch(() => ({}))), jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
