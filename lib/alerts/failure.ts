/**
 * What every role may read of a failed webhook delivery: its class, from this closed list, never
 * the error's own words. A network error's message can name the peer certificate's host names, the
 * addresses a name resolved to, or what a receiver answered; those stay in the detail, which only
 * admins read (lib/alerts/use-cases.ts).
 *
 * The delivery log keeps them apart: the class in `last_error_class`, chosen from the error's code
 * when the attempt fails, and the detail in `last_error`. A class is read back only if it is one of
 * these words exactly.
 */
export const FAILURE_CLASSES = [
  "TLS: certificate name mismatch",
  "TLS: untrusted certificate",
  "TLS: certificate expired",
  "TLS: certificate not yet valid",
  "TLS: certificate revoked",
  "TLS: handshake failed",
  "connection refused",
  "connection reset",
  "timed out",
  "network unreachable",
  "network error",
  "DNS: name not found",
  "DNS: lookup failed",
  "refused by the webhook policy",
  "HTTP 3xx: redirect not followed",
  "HTTP 4xx",
  "HTTP 5xx",
  "HTTP error",
  "rule deleted before sending",
  "rule disabled before sending",
  "delivery failed",
] as const;

export type FailureClass = (typeof FAILURE_CLASSES)[number];

const KNOWN: ReadonlySet<string> = new Set(FAILURE_CLASSES);
const SEPARATOR = " — ";

const BY_CODE: Record<string, FailureClass> = {
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS: certificate name mismatch",
  ERR_TLS_CERT_ALTNAME_FORMAT: "TLS: certificate name mismatch",
  HOSTNAME_MISMATCH: "TLS: certificate name mismatch",
  CERT_HAS_EXPIRED: "TLS: certificate expired",
  CERT_NOT_YET_VALID: "TLS: certificate not yet valid",
  CERT_REVOKED: "TLS: certificate revoked",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS: untrusted certificate",
  UNABLE_TO_GET_ISSUER_CERT: "TLS: untrusted certificate",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "TLS: untrusted certificate",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS: untrusted certificate",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS: untrusted certificate",
  CERT_UNTRUSTED: "TLS: untrusted certificate",
  CERT_REJECTED: "TLS: untrusted certificate",
  CERT_SIGNATURE_FAILURE: "TLS: untrusted certificate",
  CERT_CHAIN_TOO_LONG: "TLS: untrusted certificate",
  INVALID_CA: "TLS: untrusted certificate",
  INVALID_PURPOSE: "TLS: untrusted certificate",
  PATH_LENGTH_EXCEEDED: "TLS: untrusted certificate",
  UNABLE_TO_DECRYPT_CERT_SIGNATURE: "TLS: untrusted certificate",
  UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY: "TLS: untrusted certificate",
  ERR_TLS_CERT_SIGNATURE_ALGORITHM_UNSUPPORTED: "TLS: untrusted certificate",
  EPROTO: "TLS: handshake failed",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection reset",
  EPIPE: "connection reset",
  ETIMEDOUT: "timed out",
  ESOCKETTIMEDOUT: "timed out",
  ENETUNREACH: "network unreachable",
  EHOSTUNREACH: "network unreachable",
  ENETDOWN: "network unreachable",
  EHOSTDOWN: "network unreachable",
  EADDRNOTAVAIL: "network unreachable",
  ENOTFOUND: "DNS: name not found",
  EAI_NONAME: "DNS: name not found",
  ENODATA: "DNS: name not found",
  EAI_AGAIN: "DNS: lookup failed",
  ESERVFAIL: "DNS: lookup failed",
  EREFUSED: "DNS: lookup failed",
  ETIMEOUT: "DNS: lookup failed",
};

function codeOf(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : null;
}

/** The class of an error thrown while connecting or exchanging with a receiver, by its code. */
export function classOfNetworkError(e: unknown): FailureClass {
  const code = codeOf(e);
  if (!code) return "network error";
  if (BY_CODE[code]) return BY_CODE[code];
  if (/^ERR_(SSL|TLS)_/.test(code) || code.includes("CERT")) return "TLS: handshake failed";
  return "network error";
}

/** The class of an error of the name lookup made before sending (lib/alerts/target.ts). */
export function classOfLookupError(e: unknown): FailureClass {
  const cls = classOfNetworkError(e);
  return cls.startsWith("DNS: ") ? cls : "DNS: lookup failed";
}

/** The class of a receiver's answer that is not a success. */
export function classOfStatus(status: number): FailureClass {
  if (status >= 300 && status < 400) return "HTTP 3xx: redirect not followed";
  if (status >= 400 && status < 500) return "HTTP 4xx";
  if (status >= 500 && status < 600) return "HTTP 5xx";
  return "HTTP error";
}

/** A failed attempt: the class every role may read, and the detail only admins may. */
export interface Failure {
  errorClass: FailureClass;
  detail: string;
}

export function failure(errorClass: FailureClass, detail: string): Failure {
  return { errorClass, detail };
}

/** One line for an admin: the class, then the detail. */
export function failureText(f: Failure): string {
  return `${f.errorClass}${SEPARATOR}${f.detail}`;
}

/**
 * What the delivery log kept, as a class and a detail. Rows written before the class had its own
 * column hold `<class> — <detail>` in `last_error` (the migration that added the column split the
 * ones it recognised); a text that does not start with a known class is "delivery failed", or the
 * HTTP class when a status code was recorded, and its whole text is detail.
 */
export function readFailure(row: {
  lastErrorClass: string | null;
  lastError: string | null;
  statusCode: number | null;
}): Failure | null {
  const { lastErrorClass, lastError, statusCode } = row;
  if (lastErrorClass !== null && KNOWN.has(lastErrorClass)) {
    return { errorClass: lastErrorClass as FailureClass, detail: lastError ?? "" };
  }
  if (lastError === null) return null;
  const at = lastError.indexOf(SEPARATOR);
  const head = at > 0 ? lastError.slice(0, at) : null;
  if (head !== null && KNOWN.has(head)) {
    return { errorClass: head as FailureClass, detail: lastError.slice(at + SEPARATOR.length) };
  }
  const fallback: FailureClass =
    statusCode !== null && statusCode >= 300 ? classOfStatus(statusCode) : "delivery failed";
  return { errorClass: fallback, detail: lastError };
}
