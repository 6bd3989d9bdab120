import { BrokerError } from "@/lib/brokers/contract/errors";

/** kafkajs nests the real cause under `originalError` / `retriableError` / `cause`. */
function chain(e: unknown): Array<{ name?: string; type?: string; message?: string; code?: string }> {
  const out: Array<{ name?: string; type?: string; message?: string; code?: string }> = [];
  let cur = e as Record<string, unknown> | undefined;
  for (let i = 0; cur && typeof cur === "object" && i < 8; i++) {
    out.push(cur as { name?: string; type?: string; message?: string; code?: string });
    cur = (cur.originalError ?? cur.retriableError ?? cur.cause) as Record<string, unknown> | undefined;
  }
  return out;
}

const AUTH_TYPES = new Set([
  "TOPIC_AUTHORIZATION_FAILED",
  "GROUP_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
  "SASL_AUTHENTICATION_FAILED",
  "ILLEGAL_SASL_STATE",
  "UNSUPPORTED_SASL_MECHANISM",
  "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
]);
const NOT_FOUND_TYPES = new Set(["UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID", "INVALID_TOPIC_EXCEPTION"]);
const UNREACHABLE_NAMES = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSBrokerNotFound",
  "KafkaJSLockTimeout",
  "KafkaJSMetadataNotLoaded",
]);

/** Any kafkajs failure → a typed BrokerError with an operator-worded message. */
export function mapKafkaError(e: unknown, ctx: { endpoint: string; topic?: string; connection: string }): BrokerError {
  if (e instanceof BrokerError) return e;
  const links = chain(e);
  const message =
    links
      .map((l) => l.message)
      .filter(Boolean)
      .join(" <- ") || String(e);
  const type = links.map((l) => l.type).find((t) => t && t !== "UNKNOWN");
  const names = links.map((l) => l.name ?? "");
  if ((type && AUTH_TYPES.has(type)) || names.includes("KafkaJSSASLAuthenticationError")) {
    const what =
      type === "TOPIC_AUTHORIZATION_FAILED" && ctx.topic
        ? `read topic "${ctx.topic}"`
        : type === "GROUP_AUTHORIZATION_FAILED"
          ? "use a consumer group"
          : type === "CLUSTER_AUTHORIZATION_FAILED"
            ? "describe the cluster"
            : null;
    return new BrokerError("auth", {
      message,
      cause: e,
      userMessage: what
        ? `Kafka at ${ctx.endpoint} refused the console's credentials to ${what} (${type}). Grant the console's principal Describe and Read on the dead-letter topics.`
        : `Kafka at ${ctx.endpoint} rejected the console's credentials (SASL authentication failed). Check the username and password in connection "${ctx.connection}".`,
    });
  }
  if (type && NOT_FOUND_TYPES.has(type)) {
    return new BrokerError("not_found", {
      message,
      cause: e,
      userMessage: `Topic "${ctx.topic ?? "?"}" does not exist on ${ctx.endpoint}. It may have been deleted.`,
    });
  }
  if (
    names.some((n) => UNREACHABLE_NAMES.has(n)) ||
    links.some((l) => l.code && /ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|ECONNRESET/.test(l.code))
  ) {
    return new BrokerError("unreachable", {
      message,
      cause: e,
      userMessage: `Kafka at ${ctx.endpoint} did not answer. Check that the brokers are running and reachable from the console, then retry.`,
    });
  }
  if (names.includes("KafkaJSNumberOfRetriesExceeded") || names.includes("KafkaJSNonRetriableError")) {
    if (/connect|ECONN|timeout|timed out/i.test(message)) {
      return new BrokerError("unreachable", {
        message,
        cause: e,
        userMessage: `Kafka at ${ctx.endpoint} did not answer. Check that the brokers are running and reachable from the console, then retry.`,
      });
    }
  }
  return new BrokerError("protocol", {
    message,
    cause: e,
    userMessage: `Kafka at ${ctx.endpoint} answered with an error the console did not expect${type ? ` (${type})` : ""}. Retry; if it persists, check the broker logs.`,
  });
}
