import "server-only";
import { actorFromBearer } from "@/lib/api-tokens";
import { clientIdentity } from "@/lib/auth/client-ip";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { problemResponse } from "./problem";

export type ApiHandler<P> = (actor: Actor & { tokenId: string }, meta: RequestMeta, req: Request, params: P) => Promise<Response>;

/**
 * A route handler under app/api/v1: the caller is the token in `Authorization: Bearer` and nothing
 * else. Cookies are never read, so a browser session cannot drive these routes (no CSRF surface)
 * and a request with a session but no token is 401. Every error is problem details.
 */
export function apiRoute<P = Record<string, never>>(handler: ApiHandler<P>) {
  return async function route(req: Request, ctx?: { params: Promise<P> }): Promise<Response> {
    const { requestId, ip, clientRequestId } = clientIdentity(req.headers);
    const meta: RequestMeta = { requestId, ip, clientRequestId };
    try {
      const { actor } = await actorFromBearer(req.headers.get("authorization"), { meta });
      const params = ctx ? await ctx.params : ({} as P);
      return await handler(actor, meta, req, params);
    } catch (e) {
      return problemResponse(e, requestId);
    }
  };
}

/** A JSON body for a v1 answer (`data` already shaped by the operation's response schema). */
export function apiJson(data: unknown, init: { status?: number } = {}): Response {
  return new Response(JSON.stringify(data), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}
