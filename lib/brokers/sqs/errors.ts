/** SDK and network failures → typed `BrokerError`s with operator-worded messages. Pure. */
import { BrokerError } from "@/lib/brokers/contract/errors";

const AUTH = new Set([
  "InvalidClientTokenId",
  "SignatureDoesNotMatch",
  "AccessDenied",
  "AccessDeniedException",
  "UnrecognizedClientException",
  "InvalidSecurity",
  "ExpiredToken",
  "ExpiredTokenException",
  "MissingAuthenticationToken",
  "IncompleteSignature",
  "KmsAccessDenied",
  "CredentialsProviderError",
]);
const NOT_FOUND = new Set([
  "QueueDoesNotExist",
  "AWS.SimpleQueueService.NonExistentQueue",
  "NonExistentQueue",
  "ResourceNotFoundException",
]);
const THROTTLED = new Set([
  "ThrottlingException",
  "Throttling",
  "RequestThrottled",
  "TooManyRequestsException",
  "OverLimit",
  "KmsThrottled",
  "RequestLimitExceeded",
]);
const NETWORK = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ECONNABORTED",
]);
const TIMEOUTS = new Set(["TimeoutError", "RequestTimeout", "RequestTimeoutException", "NetworkingError"]);

interface Ctx {
  endpoint: string;
  queue?: string;
}

function fields(e: unknown): {
  name: string;
  code: string;
  status: number | undefined;
  message: string;
  awsCode: string;
} {
  const x = (e ?? {}) as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: unknown };
  };
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    name: str(x.name),
    code: str(x.code) || str(x.cause?.code),
    awsCode: str(x.Code),
    status: x.$metadata?.httpStatusCode,
    message: str(x.message),
  };
}

export function mapSqsError(e: unknown, ctx: Ctx): BrokerError {
  if (e instanceof BrokerError) return e;
  const f = fields(e);
  const where = ctx.queue ? `queue "${ctx.queue}" on ${ctx.endpoint}` : ctx.endpoint;
  const is = (set: Set<string>) =>
    set.has(f.name) || set.has(f.code) || set.has(f.awsCode) || [...set].some((s) => f.awsCode.endsWith(`#${s}`));
  if (is(NOT_FOUND)) {
    return new BrokerError("not_found", {
      message: f.message,
      cause: e,
      userMessage: `The SQS ${where.startsWith("queue") ? where : "queue"} does not exist (it may have been deleted). Check the queue name and the connection's region and account.`,
    });
  }
  if (is(THROTTLED) || f.status === 429) {
    const over = f.name === "OverLimit" || f.awsCode.endsWith("OverLimit");
    return new BrokerError("throttled", {
      message: f.message,
      cause: e,
      userMessage: over
        ? `SQS refused to hide more letters of ${where}: the queue is at its limit of in-flight messages. Wait for letters to become visible again and retry.`
        : `SQS is throttling requests to ${where}. Wait a few seconds and retry.`,
    });
  }
  if (is(AUTH) || f.status === 403) {
    const why =
      f.name === "CredentialsProviderError"
        ? "no AWS credentials were found (environment, shared profile or instance role)"
        : "the credentials were refused or lack permission";
    return new BrokerError("auth", {
      message: f.message,
      cause: e,
      userMessage: `SQS at ${ctx.endpoint} refused the request: ${why}. Check the access key, secret and region for this connection, and that its IAM policy allows sqs:ListQueues, sqs:GetQueueAttributes, sqs:ReceiveMessage and sqs:ChangeMessageVisibility.`,
    });
  }
  if (is(NETWORK) || is(TIMEOUTS) || /ECONNREFUSED|ENOTFOUND|socket hang up|connect ETIMEDOUT/i.test(f.message)) {
    return new BrokerError("unreachable", {
      message: f.message,
      cause: e,
      userMessage: `The SQS endpoint ${ctx.endpoint} cannot be reached (${f.code || f.name || "network error"}). Check that it is running and that the console can reach it.`,
    });
  }
  // An answer that is not SQS's JSON (an HTML error page from a server lacking the operation, a proxy).
  if (f.name === "SyntaxError" || /Deserialization error/i.test(f.message)) {
    return new BrokerError("protocol", {
      message: f.message,
      cause: e,
      userMessage: `SQS at ${ctx.endpoint} gave an answer the console could not understand${f.status ? ` (HTTP ${f.status})` : ""}. The server may not support this operation.`,
    });
  }
  if (f.status !== undefined && f.status >= 500) {
    return new BrokerError("unreachable", {
      message: f.message,
      cause: e,
      userMessage: `SQS at ${ctx.endpoint} answered with a server error (${f.status}). Retry in a moment.`,
    });
  }
  if (f.status !== undefined && f.status >= 400) {
    return new BrokerError("bad_request", {
      message: f.message,
      cause: e,
      userMessage: `SQS refused the request for ${where} (${f.name || f.status}).`,
    });
  }
  return new BrokerError("protocol", {
    message: f.message || String(e),
    cause: e,
    userMessage: `SQS at ${ctx.endpoint} gave an answer the console could not understand. The server may not speak the SQS JSON protocol for this operation.`,
  });
}
