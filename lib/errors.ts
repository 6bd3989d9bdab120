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
  | "internal";

export type ErrorCode = `${ErrorType}:${string}`;

export class AppError extends Error {
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
    return this.code.split(":")[0] as ErrorType;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/** HTTP status for an error type, for route handlers. */
export function httpStatusOf(e: AppError): number {
  switch (e.type) {
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
    case "unavailable":
      return 503;
    default:
      return 500;
  }
}

export type ActionResult<T> =
  | { ok: true; data: T }
  | { ok: false; error: { code: ErrorCode; message: string } };

/** Maps anything thrown to what a browser may see; unknown errors become a generic message. */
export function toActionError(e: unknown): { code: ErrorCode; message: string } {
  if (isAppError(e)) return { code: e.code, message: e.userMessage };
  return {
    code: "internal:server",
    message: "Something went wrong on the server. The error was logged; try again, and tell the console's owners if it persists.",
  };
}
