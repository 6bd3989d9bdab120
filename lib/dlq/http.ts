import "server-only";
import { NextResponse } from "next/server";
import { httpStatusOf, toActionError } from "@/lib/errors";
import { asAppError } from "./app-error";

/**
 * What may be logged of an unexpected error: its name and stack frames, never its message, which
 * can quote payload or header content (e.g. a JSON.parse SyntaxError quotes its input).
 */
export function loggableError(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const frames = (err.stack ?? "").split("\n").filter((l) => /^\s+at /.test(l)).slice(0, 8);
  return [err.name, ...frames].join("\n");
}

/** JSON error for route handlers: the AppError's user message only, never a raw exception. */
export function errorResponse(err: unknown): NextResponse {
  const e = asAppError(err);
  if (!e) console.error("route handler failed:", loggableError(err));
  const status = e ? httpStatusOf(e) : 500;
  return NextResponse.json({ ok: false, error: toActionError(e ?? err) }, { status, headers: { "Cache-Control": "no-store" } });
}
