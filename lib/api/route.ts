import "server-only";
import { actorFromBearer } from "@/lib/api-tokens";
import { clientIdentity } from "@/lib/auth/client-ip";
import type { Actor, RequestMeta } from "@/lib/auth/session";
import { authorize } from "@/lib/auth/authorize";
import type { Permission } from "@/lib/auth/permissions";
import type { z } from "zod";
import { parseBody, parseParams } from "./body";
import { problemResponse } from "./problem";
import { parseQuery } from "./query";
import type { ApiOperation } from "./registry";

export type ApiHandler<P> = (
  actor: Actor & { tokenId: string },
  meta: RequestMeta,
  req: Request,
  params: P,
) => Promise<Response>;

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

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface OperationInput<P, Q, B> {
  actor: Actor & { tokenId: string };
  meta: RequestMeta;
  req: Request;
  params: P;
  query: Q;
  body: B;
}

/**
 * A v1 route made from its operation (lib/api/v1/*.ts), so the route does what the document says:
 * the bearer token is checked; `guard` is authorized before anything of the request is read (a role
 * that may not learns nothing, not even what a valid request looks like; the refusal is audited
 * under `guard.action`); then the path, query and body are parsed with the operation's schemas; the
 * handler's answer is shaped by the response schema and sent with the operation's status. A handler
 * may return a Response of its own (a streamed export).
 *
 * The guard is the first check, not the only one: the use case the handler calls authorizes again
 * (with the DLQ it concerns) and audits the outcome, as it does for the pages.
 */
export function operationRoute<
  Q extends z.ZodObject | undefined,
  R extends z.ZodType,
  P extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
>(
  op: ApiOperation<Q, R, P, B>,
  guard: { permission: Permission; action: string } | null,
  handler: (input: OperationInput<Parsed<P>, Parsed<Q>, Parsed<B>>) => Promise<z.input<R> | Response>,
) {
  return apiRoute<Record<string, string | string[]>>(async (actor, meta, req, rawParams) => {
    if (guard) await authorize(actor, guard.permission, { action: guard.action, meta });
    const params = (op.params ? parseParams(op.params, rawParams) : undefined) as Parsed<P>;
    const query = (op.query ? parseQuery(op.query, req) : undefined) as Parsed<Q>;
    const body = (op.body ? await parseBody(op.body, req) : undefined) as Parsed<B>;
    const out = await handler({ actor, meta, req, params, query, body });
    if (out instanceof Response) return out;
    return apiJson(op.response.parse(out), { status: op.status ?? 200 });
  });
}
