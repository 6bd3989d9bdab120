import "server-only";
import { NextResponse } from "next/server";
import { httpStatusOf, loggableError, toActionError } from "@/lib/errors";
import { asAppError } from "./app-error";
import { assertSameOrigin } from "@/lib/auth/origin";
import { requireActor, requestMeta, type Actor, type RequestMeta } from "@/lib/auth/session";

export { loggableError };

/** JSON error for route handlers: the AppError's user message only, never a raw exception. */
export function errorResponse(err: unknown): NextResponse {
  const e = asAppError(err);
  if (!e) console.error("route handler failed:", loggableError(err));
  const status = e ? httpStatusOf(e) : 500;
  return NextResponse.json(
    { ok: false, error: toActionError(e ?? err) },
    { status, headers: { "Cache-Control": "no-store" } },
  );
}

/**
 * POST /…/[id]/<verb> for a job (cancel, pause, resume): same origin, a signed-in actor, then the
 * use case, which authorizes and audits. One shape for every job control route.
 */
export function jobControlRoute<T>(control: (actor: Actor, meta: RequestMeta, input: { jobId: string }) => Promise<T>) {
  return async function handlePost(req: Request, ctx: { params: Promise<{ id: string }> }): Promise<NextResponse> {
    try {
      assertSameOrigin(req);
      const { id } = await ctx.params;
      const actor = await requireActor();
      return NextResponse.json(
        { ok: true, data: await control(actor, await requestMeta(), { jobId: id }) },
        { headers: { "Cache-Control": "no-store" } },
      );
    } catch (e) {
      return errorResponse(e);
    }
  };
}
