/**
 * Errors that cross a layer boundary. `message` is for logs; `userMessage` is the only text that
 * may reach a browser. Codes are shaped `type:surface`, e.g. `forbidden:audit`, `unavailable:broker`.
 */
export type ErrorType =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "unavailable"
  | "confirmation_required"
  | "too_many_requests"
  | "internal";

export type ErrorCode = `${ErrorType}:${string}`;

/**
 * Next compiles server code into several layers (route handlers, RSC, SSR, instrumentation), each
 * with its own copy of this module; a broker adapter kept on globalThis may throw an AppError
 * built from another copy, so `instanceof` alone is not enough. A global symbol brands them all.
 */
const APP_ERROR_BRAND = Symbol.for("dlq-console.app-error");

export class AppError extends Error {
  readonly [APP_ERROR_BRAND] = true;
  readonly code: ErrorCode;
  readonly userMessage: string;
  readonly details?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    opts: { message?: string; userMessage: string; cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(opts.message ?? opts.userMessage, { cause: opts.cause });
    this.name = "AppError";
    this.code = code;
    this.userMessage = opts.userMessage;
    this.details = opts.details;
  }

  get type(): ErrorType {
    return errorTypeOf(this);
  }
}

export function isAppError(e: unknown): e is AppError {
  return (
    e instanceof AppError ||
    (typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[APP_ERROR_BRAND] === true)
  );
}

/** The AppError this is (from any bundle layer), or null. */
export function asAppError(e: unknown): AppError | null {
  return isAppError(e) ? e : null;
}

/** The type half of an error's code; works for AppErrors from other bundle layers, whose getters differ. */
export function errorTypeOf(e: Pick<AppError, "code">): ErrorType {
  return e.code.split(":")[0] as ErrorType;
}

/** HTTP status for an error type, for route handlers. */
export function httpStatusOf(e: AppError): number {
  switch (errorTypeOf(e)) {
    case "bad_request":
      return 400;
    case "unauthorized":
      return 401;
    case "forbidden":
      return 403;
    case "not_found":
      return 404;
    case "conflict":
    case "confirmation_required":
      return 409;
    case "too_many_requests":
      return 429;
    case "unavailable":
      return 503;
    default:
      return 500;
  }
}

export type ActionResult<T> = { ok: true; data: T } | { ok: false; error: { code: ErrorCode; message: string } };

/** Maps anything thrown to what a browser may see; unknown errors become a generic message. */
export function toActionError(e: unknown): { code: ErrorCode; message: string } {
  if (isAppError(e)) return { code: e.code, message: e.userMessage };
  return {
    code: "internal:server",
    message:
      "Something went wrong on the server. The error was logged; try again, and tell the console's owners if it persists.",
  };
}

/**
 * An unexpected error as it may go to the logs: its name and stack frames, never its message,
 * which can quote payload bytes or header values (a JSON parse error, a driver error).
 */
export function loggableError(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const frames = (err.stack ?? "")
    .split("\n")
    .filter((l) => /^\s+at /.test(l))
    .slice(0, 8);
  return [err.name, ...frames].join("\n");
}
