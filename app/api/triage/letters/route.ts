import { requireActor, requestMeta } from "@/lib/auth/session";
import { errorResponse } from "@/lib/use-case/http";
import { ok, parseLetterFilter } from "@/lib/triage/http";
import { listLetters } from "@/lib/triage/use-cases";

export const dynamic = "force-dynamic";

/** The filtered set: filters as in parseLetterFilter, &after=<cursor>&limit= → { letters, count, nextCursor }. */
export async function GET(req: Request) {
  try {
    const p = new URL(req.url).searchParams;
    const actor = await requireActor();
    const filter = parseLetterFilter(p);
    return ok(
      await listLetters(actor, await requestMeta(), {
        filter,
        after: p.get("after"),
        limit: Number(p.get("limit") ?? 50),
      }),
    );
  } catch (e) {
    return errorResponse(e);
  }
}
