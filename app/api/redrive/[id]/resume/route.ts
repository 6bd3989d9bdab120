import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/dlq/http";
import { resumeRedrive } from "@/lib/redrive/use-cases";
import { ok, requireSameOrigin } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/** Resumes a paused redrive (breaker window starts afresh). → RedriveView. */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    requireSameOrigin(req);
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await resumeRedrive(actor, await requestMeta(), { jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
