/** The typed failure every adapter throws, with the error code each kind maps to. */
import { AppError, type ErrorCode } from "@/lib/errors";

export type BrokerErrorKind =
  | "unreachable"
  | "auth"
  | "not_found"
  | "throttled"
  | "risky_read"
  | "bad_request"
  | "protocol";

const CODES: Record<BrokerErrorKind, ErrorCode> = {
  unreachable: "unavailable:broker",
  auth: "forbidden:broker",
  not_found: "not_found:queue",
  throttled: "unavailable:throttled",
  risky_read: "confirmation_required:read",
  bad_request: "bad_request:broker",
  protocol: "internal:broker",
};

/** Typed failure from an adapter; `userMessage` is written for the operator. */
export class BrokerError extends AppError {
  readonly kind: BrokerErrorKind;
  constructor(
    kind: BrokerErrorKind,
    opts: { message?: string; userMessage: string; cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(CODES[kind], opts);
    this.name = "BrokerError";
    this.kind = kind;
  }
}

/**
 * `details.busy` of a "throttled" refusal of a read that waited out its turn behind another
 * console read of the same queue (RabbitMQ's read lock): pages name the console's job that reads
 * it (lib/dlq/busy.ts).
 */
export const READ_TURN_BUSY = "read-turn";
