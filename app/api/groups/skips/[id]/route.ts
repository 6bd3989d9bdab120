import { requireActor, requestMeta } from "@/lib/auth/session";
import { viewSkip } from "@/lib/consumer-groups/skip";
import { ok } from "@/lib/triage/http";
import { errorResponse } from "@/lib/use-case/http";

export const dynamic = "force-dynamic";

/** One consumer-group skip job (poll it for progress: waiting for an empty group, the copies, the offsets). */
export async function GET(_req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await viewSkip(actor, await requestMeta(), { jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
