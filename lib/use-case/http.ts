import "server-only";
import { NextResponse } from "next/server";
import { AppError, httpStatusOf, loggableError, toActionError, asAppError } from "@/lib/errors";
import { assertSameOrigin } from "@/lib/auth/origin";
import { requireActor, requestMeta, type Actor, type RequestMeta } from "@/lib/auth/session";

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

/** The success answer of a cookie-session route: `{ ok: true, data }`, never cached. */
export function ok<T>(data: T, status = 200): NextResponse {
  return NextResponse.json({ ok: true, data }, { status, headers: { "Cache-Control": "no-store" } });
}

/** A request body that must be a JSON object; anything else is `bad_request:body`. */
export async function jsonBody(req: Request): Promise<Record<string, unknown>> {
  try {
    const body = (await req.json()) as unknown;
    if (body && typeof body === "object" && !Array.isArray(body)) return body as Record<string, unknown>;
  } catch {
    /* fall through */
  }
  throw new AppError("bad_request:body", { userMessage: "The request body must be a JSON object." });
}

/** What a cookie-session route's handler gets: the request, who asks, and its path parameters. */
export interface SessionRequest<P> {
  req: Request;
  search: URLSearchParams;
  actor: Actor;
  meta: RequestMeta;
  params: P;
}

const READS = new Set(["GET", "HEAD"]);

/**
 * The one boundary of the route handlers the pages call with their session cookie (the API for
 * tokens is lib/api/route.ts): a state change must come from the console's own pages, the caller
 * must be signed in, and any error is answered in the operator's words. The handler calls a use
 * case, which authorizes and audits; it returns the data (answered `{ ok: true, data }`) or a
 * Response of its own (a status other than 200, a download).
 */
export function sessionRoute<P = Record<string, never>>(
  handle: (r: SessionRequest<P>) => Promise<unknown>,
): (req: Request, ctx: { params: Promise<P> }) => Promise<Response> {
  return async function handleRequest(req, ctx) {
    try {
      if (!READS.has(req.method)) assertSameOrigin(req);
      const params = (await ctx?.params) ?? ({} as P);
      const actor = await requireActor();
      const answer = await handle({
        req,
        search: new URL(req.url).searchParams,
        actor,
        meta: await requestMeta(),
        params,
      });
      return answer instanceof Response ? answer : ok(answer);
    } catch (e) {
      return errorResponse(e);
    }
  };
}

/**
 * POST /…/[id]/<verb> for a job (cancel, pause, resume): the use case, which authorizes and audits,
 * with the job's id. One shape for every job control route.
 */
export function jobControlRoute<T>(control: (actor: Actor, meta: RequestMeta, input: { jobId: string }) => Promise<T>) {
  return sessionRoute<{ id: string }>(({ actor, meta, params }) => control(actor, meta, { jobId: params.id }));
}
