import "server-only";
import { NextResponse } from "next/server";
import { httpStatusOf, loggableError, toActionError } from "@/lib/errors";
import { asAppError } from "./app-error";

export { loggableError };

/** JSON error for route handlers: the AppError's user message only, never a raw exception. */
export function errorResponse(err: unknown): NextResponse {
  const e = asAppError(err);
  if (!e) console.error("route handler failed:", loggableError(err));
  const status = e ? httpStatusOf(e) : 500;
  return NextResponse.json({ ok: false, error: toActionError(e ?? err) }, { status, headers: { "Cache-Control": "no-store" } });
}
