import { asAppError, errorTypeOf, httpStatusOf, loggableError, type AppError, type ErrorType } from "@/lib/errors";
import { tokenRateLimitOf } from "@/lib/api-tokens";
import { z } from "zod";

/** Problem details (RFC 9457) as every /api/v1 error is answered; `code` is the AppError code. */
export const problemSchema = z
  .object({
    type: z.string().meta({ description: "urn:dlq-console:problem:<error type>" }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().meta({ description: "The request id, as recorded in the audit log and the server logs." }),
    code: z.string().meta({ description: "The console's error code, `type:surface`, e.g. `forbidden:audit:read`." }),
    count: z.number().int().optional().meta({
      description:
        "On `conflict:count`: the number of letters the selection holds now (plan again, review it, and confirm that count).",
    }),
  })
  .meta({ id: "Problem" });
export type Problem = z.infer<typeof problemSchema>;

const TITLES: Record<ErrorType, string> = {
  bad_request: "Bad request",
  unauthorized: "Unauthorized",
  forbidden: "Forbidden",
  not_found: "Not found",
  conflict: "Conflict",
  unavailable: "Service unavailable",
  confirmation_required: "Confirmation required",
  too_many_requests: "Too many requests",
  internal: "Internal server error",
};

const INTERNAL_DETAIL =
  "Something went wrong on the server. The error was logged under this request id; tell the console's owners if it persists.";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

/**
 * The problem response for anything thrown by a v1 handler. Only an AppError's user message reaches
 * the client; anything else is logged (name and stack, never its message) and answered 500.
 */
export function problemResponse(err: unknown, requestId: string): Response {
  const e: AppError | null = asAppError(err);
  if (!e) console.error(`api v1 request ${requestId} failed:`, loggableError(err));
  const type: ErrorType = e ? errorTypeOf(e) : "internal";
  const status = e ? httpStatusOf(e) : 500;
  const body: Problem = {
    type: `urn:dlq-console:problem:${type}`,
    title: TITLES[type] ?? TITLES.internal,
    status,
    detail: e ? e.userMessage : INTERNAL_DETAIL,
    instance: requestId,
    code: e ? e.code : "internal:server",
  };
  // The one detail a script needs to act on without parsing words: the count a confirmation missed.
  // Other details stay server-side (they may name internals).
  if (e?.code === "conflict:count" && typeof e.details?.count === "number") body.count = e.details.count;
  const headers = new Headers({ "Content-Type": PROBLEM_CONTENT_TYPE, "Cache-Control": "no-store" });
  if (status === 401) headers.set("WWW-Authenticate", 'Bearer realm="dlq-console"');
  const limit = tokenRateLimitOf(e);
  if (limit) headers.set("Retry-After", String(limit.retryAfterSeconds));
  return new Response(JSON.stringify(body), { status, headers });
}
