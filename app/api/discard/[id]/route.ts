import { requireActor, requestMeta } from "@/lib/auth/session";
import { getDiscard } from "@/lib/discard/use-cases";
import { errorResponse } from "@/lib/use-case/http";
import { ok } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/** One discard (poll it for progress) with counts and a ledger page: ?after=<seq>&limit=&state=. */
export async function GET(req: Request, ctx: { params: Promise<{ id: string }> }) {
  try {
    const { id } = await ctx.params;
    const p = new URL(req.url).searchParams;
    const actor = await requireActor();
    return ok(
      await getDiscard(actor, await requestMeta(), {
        jobId: id,
        after: p.get("after") ?? undefined,
        limit: p.get("limit") ?? undefined,
        state: p.get("state") || undefined,
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}
