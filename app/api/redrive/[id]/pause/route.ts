import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/dlq/http";
import { pauseRedrive } from "@/lib/redrive/use-cases";
import { ok, requireSameOrigin } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/** Pauses at the next batch. → RedriveView. */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    requireSameOrigin(req);
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await pauseRedrive(actor, await requestMeta(), { jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
