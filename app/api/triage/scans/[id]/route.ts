import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { ok } from "@/lib/triage/http";
import { getScan } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** One scan with its progress (poll it for the progress bar). */
export async function GET(_req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    const { id } = await ctx.params;
    const actor = await requireActor();
    return ok(await getScan(actor, await requestMeta(), { jobId: id }));
  } catch (e) {
    return errorResponse(e);
  }
}
