import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { listRedrives, startRedrive } from "@/lib/redrive/use-cases";
import { jsonBody, ok, requireSameOrigin } from "@/lib/triage/http";

export const dynamic = "force-dynamic";

/** Redrives, newest first: ?connectionId=&queue= (both optional). */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const actor = await requireActor();
    return ok(
      await listRedrives(actor, await requestMeta(), {
        connectionId: p.get("connectionId") ?? undefined,
        queue: p.get("queue") ?? undefined,
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}

/** Starts a redrive (stage 1, the sample): the plan with `fix` and `confirmedCount` → 202 RedriveView. */
export async function POST(req: Request) {
  try {
    requireSameOrigin(req);
    const actor = await requireActor();
    return ok(await startRedrive(actor, await requestMeta(), await jsonBody(req).catch(() => ({}))), 202);
  } catch (e) {
    return errorResponse(e);
  }
}
