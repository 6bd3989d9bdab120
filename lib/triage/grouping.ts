/**
 * The grouping key of a dead letter: what failed (root-cause exception class, normalised message,
 * top frame), or, when the letter carries no exception metadata, why the broker dead-lettered it
 * (reason plus a receive-count bucket). Pure; the index stores `key` and the parts beside it.
 */
import { hash } from "node:crypto";
import { normalizeMessage, parseStack, topFrameOf, type ParsedStack } from "./normalize";

/**
 * Part of every key: bump when normalisation or key parts change, or when what the adapters hand
 * grouping changes, so the index regroups instead of mixing old and new keys (lib/triage/regroup.ts:
 * each scan stamps it; older groups are regrouped by the next complete scan, started by the console
 * itself where reading is free). 2: Kafka letters name Spring's cause with its own message and give
 * reasons in words (lib/brokers/kafka/failure-words.ts), which changed the keys of some letters.
 */
export const GROUPING_VERSION = 2;

export interface GroupingInput {
  exceptionClass: string | null;
  exceptionMessage: string | null;
  stackTrace: string | null;
  reason: string | null;
  count: number | null;
}

export interface GroupKey {
  /** First 32 hex digits of the SHA-256 of the parts below and GROUPING_VERSION. */
  key: string;
  basis: "exception" | "reason";
  /** The root cause's class where the stack trace shows a cause chain. */
  exceptionClass: string | null;
  normalizedMessage: string | null;
  topFrame: string | null;
  /** Basis "reason" only: "<reason> / <bucket>", e.g. "rejected / 2-3". */
  reason: string | null;
  /** Basis "reason" only: the receive-count bucket on its own. */
  receiveBucket: string | null;
  /** The outermost exception's class when it differs from `exceptionClass` (the wrapper grouping looked through). Not part of the key. */
  wrapperClass: string | null;
  label: string;
}

/** Buckets keep "died on first delivery" (poison message) apart from "kept failing" (flaky dependency). */
export function receiveCountBucket(n: number | null): string {
  if (n === null || !Number.isFinite(n) || n < 1) return "unknown";
  if (n <= 1) return "1";
  if (n <= 3) return "2-3";
  if (n <= 10) return "4-10";
  return "11+";
}

const blank = (s: string | null | undefined) => (s?.trim() ? s.trim() : null);

/** Spring before 6 folds the cause into the message: "…; nested exception is com.foo.X: msg". */
function nestedCause(message: string | null): { exceptionClass: string; message: string | null } | null {
  const i = message?.lastIndexOf("nested exception is ") ?? -1;
  if (!message || i < 0) return null;
  const m = /^([A-Za-z_$][\w$]*(?:[.$][A-Za-z_$][\w$]*)+)(?::\s*([\s\S]*))?$/.exec(message.slice(i + 20).trim());
  return m ? { exceptionClass: m[1], message: blank(m[2]) } : null;
}

/**
 * Resolves what actually failed. The root cause wins over the wrapper: every failure of a Spring
 * listener is a ListenerExecutionFailedException, so grouping by the outer class would put every
 * failure in one group. Header values win over the stack's when they describe the same exception,
 * because headers are not truncated.
 */
function resolveFailure(input: GroupingInput, parsed: ParsedStack | null) {
  const outer = parsed?.chain[0] ?? null;
  const root = parsed && parsed.chain.length > 1 ? parsed.chain[parsed.chain.length - 1] : null;
  const headerClass = blank(input.exceptionClass);
  const headerMessage = blank(input.exceptionMessage);
  let exceptionClass = headerClass ?? outer?.exceptionClass ?? null;
  let message = headerMessage ?? (!headerClass || headerClass === outer?.exceptionClass ? blank(outer?.message) : null);
  if (root?.exceptionClass) {
    message = headerClass === root.exceptionClass && headerMessage ? headerMessage : blank(root.message);
    exceptionClass = root.exceptionClass;
  } else if (!parsed) {
    const nested = nestedCause(message);
    if (nested) ({ exceptionClass, message } = nested);
  }
  const wrapper = headerClass ?? outer?.exceptionClass ?? null;
  return { exceptionClass, message, wrapperClass: wrapper && wrapper !== exceptionClass ? wrapper : null };
}

/**
 * Digests of the parts already seen: a DLQ has few groups and a scan asks for every letter's key,
 * so most calls find theirs here instead of hashing again. Bounded (cleared when full).
 */
const digests = new Map<string, string>();
const DIGESTS_MAX = 4096;

function digest(parts: Array<string | null>): string {
  // JSON keeps null distinct from "" and no separator can be forged by the values.
  const text = JSON.stringify([GROUPING_VERSION, ...parts]);
  let d = digests.get(text);
  if (d === undefined) {
    // One-shot hash: no Hash object per call.
    d = hash("sha256", text, "hex").slice(0, 32);
    if (digests.size >= DIGESTS_MAX) digests.clear();
    digests.set(text, d);
  }
  return d;
}

/**
 * digest(["exception", class, message, top frame]) through a memo keyed by the three parts
 * themselves: most letters' parts are a group's, and the JSON text of them (the memo key above)
 * was built for every letter only to be looked up. Bounded like `digests`.
 */
const exceptionDigests = new Map<string | null, Map<string | null, Map<string | null, string>>>();
let exceptionDigestCount = 0;

function exceptionDigest(exceptionClass: string | null, normalizedMessage: string | null, topFrame: string | null) {
  let byMessage = exceptionDigests.get(exceptionClass);
  let byFrame = byMessage?.get(normalizedMessage);
  let d = byFrame?.get(topFrame);
  if (d !== undefined) return d;
  d = digest(["exception", exceptionClass, normalizedMessage, topFrame]);
  if (exceptionDigestCount >= DIGESTS_MAX) {
    exceptionDigests.clear();
    exceptionDigestCount = 0;
    byMessage = byFrame = undefined;
  }
  if (!byMessage) {
    byMessage = new Map();
    exceptionDigests.set(exceptionClass, byMessage);
  }
  if (!byFrame) {
    byFrame = new Map();
    byMessage.set(normalizedMessage, byFrame);
  }
  byFrame.set(topFrame, d);
  exceptionDigestCount++;
  return d;
}

export function groupKeyOf(input: GroupingInput): GroupKey {
  // One parse serves both the cause chain and the top frame (parsing is most of the cost).
  const parsed = parseStack(input.stackTrace);
  const { exceptionClass, message, wrapperClass } = resolveFailure(input, parsed);
  const normalizedMessage = message ? normalizeMessage(message) || null : null;
  const topFrame = input.stackTrace ? topFrameOf(parsed) : null;
  if (exceptionClass || normalizedMessage) {
    // [class, message].filter(Boolean).join(": ") without the arrays.
    const head =
      exceptionClass && normalizedMessage
        ? `${exceptionClass}: ${normalizedMessage}`
        : exceptionClass || normalizedMessage!;
    return {
      key: exceptionDigest(exceptionClass, normalizedMessage, topFrame),
      basis: "exception",
      exceptionClass,
      normalizedMessage,
      topFrame,
      reason: null,
      receiveBucket: null,
      wrapperClass,
      label: topFrame ? `${head} @ ${topFrame}` : head,
    };
  }
  const receiveBucket = receiveCountBucket(input.count);
  const reason = `${blank(input.reason) ?? "unknown"} / ${receiveBucket}`;
  return {
    key: digest(["reason", reason]),
    basis: "reason",
    exceptionClass: null,
    normalizedMessage: null,
    topFrame: null,
    reason,
    receiveBucket,
    wrapperClass: null,
    label: `${blank(input.reason) ?? "No reason given"}, received ${receiveBucket === "unknown" ? "an unknown number of" : receiveBucket} time${receiveBucket === "1" ? "" : "s"}`,
  };
}
