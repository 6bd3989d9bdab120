import { AppError, toActionError, type ErrorCode } from "@/lib/errors";

/**
 * An AppError, also when it was thrown by another bundle's copy of the class: Next compiles server
 * code into several layers (route handlers, SSR, instrumentation) and a broker adapter kept on
 * globalThis may throw errors built from a different copy of `AppError`, so `instanceof` fails.
 */
export function asAppError(e: unknown): AppError | null {
  if (e instanceof AppError) return e;
  if (!e || typeof e !== "object") return null;
  const o = e as { code?: unknown; userMessage?: unknown; message?: unknown; details?: unknown };
  if (typeof o.code !== "string" || typeof o.userMessage !== "string" || !/^[a-z_]+:[\w.:-]+$/.test(o.code)) return null;
  return new AppError(o.code as ErrorCode, {
    message: typeof o.message === "string" ? o.message : o.userMessage,
    userMessage: o.userMessage,
    cause: e,
    details: o.details && typeof o.details === "object" ? (o.details as Record<string, unknown>) : undefined,
  });
}

/** `toActionError` that also recognises AppErrors from other bundle layers. */
export function toSafeError(e: unknown) {
  return toActionError(asAppError(e) ?? e);
}
