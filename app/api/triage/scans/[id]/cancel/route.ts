import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/dlq/http";
import { ok, requireSameOrigin } from "@/lib/triage/http";
import { cancelScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** Asks the scan to stop at its next batch; returns the scan (state cancelling or cancelled). */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    requireSameOrigin(req);
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await cancelScan(actor, await requestMeta(), { jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
