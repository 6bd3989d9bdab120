import "server-only";
import { NextResponse } from "next/server";
import { httpStatusOf, toActionError } from "@/lib/errors";
import { asAppError } from "./app-error";

/** JSON error for route handlers: the AppError's user message only, never a raw exception. */
export function errorResponse(err: unknown): NextResponse {
  const e = asAppError(err);
  if (!e) console.error("route handler failed", err);
  const status = e ? httpStatusOf(e) : 500;
  return NextResponse.json({ ok: false, error: toActionError(e ?? err) }, { status, headers: { "Cache-Control": "no-store" } });
}
