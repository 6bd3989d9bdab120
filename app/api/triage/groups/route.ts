import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { ok } from "@/lib/triage/http";
import { listGroups } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** ?connectionId=&queue=&by=group|origin|reason|class|header:<name> */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const actor = await requireActor();
    return ok(
      await listGroups(actor, await requestMeta(), {
        connectionId: p.get("connectionId") ?? "",
        queue: p.get("queue") ?? "",
        by: p.get("by"),
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}
