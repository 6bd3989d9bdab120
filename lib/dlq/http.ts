import "server-only";
import { NextResponse } from "next/server";
import { httpStatusOf, isAppError, toActionError } from "@/lib/errors";

/** JSON error for route handlers: the AppError's user message only, never a raw exception. */
export function errorResponse(e: unknown): NextResponse {
  if (!isAppError(e)) console.error("route handler failed", e);
  const status = isAppError(e) ? httpStatusOf(e) : 500;
  return NextResponse.json({ ok: false, error: toActionError(e) }, { status, headers: { "Cache-Control": "no-store" } });
}
