import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { planRedrive } from "@/lib/redrive/use-cases";
import { jsonBody, ok, requireSameOrigin } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/** Preview: { connectionId, queue, selection, target? } → { count, scope, target, orderedStream, warnings, nativeMoveNote }. */
export async function POST(req: Request) {
  try {
    requireSameOrigin(req);
    const actor = await requireActor();
    return ok(await planRedrive(actor, await requestMeta(), await jsonBody(req).catch(() => ({}))));
  } catch (e) {
    return errorResponse(e);
  }
}
