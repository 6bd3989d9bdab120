/**
 * An SQS `Message` → a broker-neutral `Letter`. Pure (no client): system attributes become
 * properties, message attributes become headers with their data types kept, and the failure is
 * read from DeadLetterQueueSourceArn, the receive count and the attributes that Lambda, EventBridge
 * and common application conventions set.
 */
import * as crypto from "node:crypto";
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import type {
  DeathRecord,
  DisplayValue,
  DlqWarning,
  FailureInfo,
  HeaderEntry,
  Letter,
} from "@/lib/brokers/contract/letter";
import { bytesValue, displayText, sha256Hex, timestampValue } from "@/lib/brokers/display";
import { exceptionClassFromStack } from "@/lib/brokers/failure-text";
import { expandCombinedMarker } from "@/lib/brokers/sqs/markers";

/** The queue name of an SQS ARN (arn:aws:sqs:region:account:name), or null. */
export function queueNameOfArn(arn: string | undefined | null): string | null {
  if (!arn) return null;
  const m = /^arn:[^:]+:sqs:[^:]*:[^:]*:(.+)$/.exec(arn);
  return m ? m[1] : null;
}

/** A message attribute with its data type: String(.x) as text, Number(.x) as exact decimal text, Binary(.x) as bytes. */
export function attributeValue(a: MessageAttributeValue): DisplayValue {
  const base = (a.DataType ?? "String").split(".")[0];
  if (base === "Binary") return a.BinaryValue ? bytesValue(Uint8Array.from(a.BinaryValue)) : { t: "null" };
  if (a.StringValue === undefined) return { t: "null" };
  return base === "Number" ? { t: "number", v: a.StringValue } : { t: "string", v: a.StringValue };
}

export function decodeAttributes(msg: Message): HeaderEntry[] {
  const attrs = msg.MessageAttributes ?? {};
  const headers = Object.keys(attrs)
    .sort()
    .map((name) => ({ name, value: attributeValue(attrs[name]) }));
  // Redrive markers written as one combined attribute read like the four separate ones.
  return expandCombinedMarker(headers, attrs);
}

const TIMESTAMPS = new Set(["SentTimestamp", "ApproximateFirstReceiveTimestamp"]);
const NUMBERS = new Set(["ApproximateReceiveCount", "SequenceNumber"]);
/** SQS system attributes, in the order the letter view shows them. */
export const SYSTEM_ORDER = [
  "SentTimestamp",
  "ApproximateFirstReceiveTimestamp",
  "ApproximateReceiveCount",
  "DeadLetterQueueSourceArn",
  "SenderId",
  "AWSTraceHeader",
  "MessageGroupId",
  "MessageDeduplicationId",
  "SequenceNumber",
];

export function decodeProperties(msg: Message): HeaderEntry[] {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const out: HeaderEntry[] = [];
  if (msg.MessageId) out.push({ name: "MessageId", value: { t: "string", v: msg.MessageId } });
  const names = [
    ...SYSTEM_ORDER.filter((n) => n in sys),
    ...Object.keys(sys)
      .filter((n) => !SYSTEM_ORDER.includes(n))
      .sort(),
  ];
  for (const name of names) {
    const v = sys[name];
    if (TIMESTAMPS.has(name) && /^\d+$/.test(v)) out.push({ name, value: timestampOf(Number(v)) });
    else if (NUMBERS.has(name) && /^\d+$/.test(v)) out.push({ name, value: { t: "number", v } });
    else out.push({ name, value: { t: "string", v } });
  }
  if (msg.MD5OfBody) out.push({ name: "MD5OfBody", value: { t: "string", v: msg.MD5OfBody } });
  if (msg.MD5OfMessageAttributes)
    out.push({ name: "MD5OfMessageAttributes", value: { t: "string", v: msg.MD5OfMessageAttributes } });
  const attrs = msg.MessageAttributes ?? {};
  const types = Object.keys(attrs)
    .sort()
    .map((k): [string, DisplayValue] => [k, { t: "string", v: attrs[k].DataType ?? "String" }]);
  if (types.length) out.push({ name: "MessageAttribute DataTypes", value: { t: "table", v: types } });
  return out;
}

const CLASS_ATTRS = [
  "exceptionClass",
  "exception-class",
  "x-exception-class",
  "exception_class",
  "exceptionType",
  "exception-type",
  "errorType",
  "error-type",
  "errorClass",
  "error-class",
];
const MESSAGE_ATTRS = [
  "exceptionMessage",
  "exception-message",
  "x-exception-message",
  "errorMessage",
  "error-message",
  "error_message",
];
const STACK_ATTRS = ["stackTrace", "stack-trace", "stacktrace", "x-exception-stacktrace", "exception-stacktrace"];

/**
 * display's `headerText` over one letter's headers, with its names looked up once: a letter is
 * asked for about 30 names (every convention's spelling of class, message, stack trace, ids), and
 * `headerText` lower-cases every header's name again for each name it does not find exactly.
 * Same answers: per name in order, the first header of exactly that name, else the first whose
 * name matches it in any case; the first non-empty text wins.
 */
export interface HeaderLookup {
  has(name: string): boolean;
  text(...names: string[]): string | null;
}
export function headerLookup(headers: HeaderEntry[]): HeaderLookup {
  const exact = new Map<string, HeaderEntry["value"]>();
  const lower = new Map<string, HeaderEntry["value"]>();
  for (const h of headers) {
    if (!exact.has(h.name)) exact.set(h.name, h.value);
    const l = h.name.toLowerCase();
    if (!lower.has(l)) lower.set(l, h.value);
  }
  return {
    has: (name) => exact.has(name),
    text(...names) {
      for (const n of names) {
        const t = displayText(exact.get(n) ?? lower.get(n.toLowerCase()));
        if (t !== null && t !== "") return t;
      }
      return null;
    },
  };
}

/** Where the letter's error attributes come from, when a well-known AWS service wrote them. */
export function errorSourceOf(
  headers: HeaderEntry[],
  find: HeaderLookup = headerLookup(headers),
): "lambda" | "eventbridge" | null {
  const has = find.has;
  if (has("ERROR_CODE") || has("RULE_ARN") || has("TARGET_ARN")) return "eventbridge";
  if (has("RequestID") && (has("ErrorCode") || has("ErrorMessage"))) return "lambda";
  return null;
}

export interface FailureContext {
  /** Name of the only source queue (ListDeadLetterSourceQueues), used when the server does not say. */
  soleSource: string | null;
  configOrigin: string | null;
}

export function failureOf(
  msg: Message,
  headers: HeaderEntry[],
  ctx: FailureContext,
  find: HeaderLookup = headerLookup(headers),
): { failure: FailureInfo; history: DeathRecord[] } {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  const source = queueNameOfArn(sys.DeadLetterQueueSourceArn);
  const origin = source ?? ctx.soleSource ?? ctx.configOrigin;
  const receiveCount = /^\d+$/.test(sys.ApproximateReceiveCount ?? "") ? Number(sys.ApproximateReceiveCount) : null;
  const via = errorSourceOf(headers, find);
  const stackTrace = find.text(...STACK_ATTRS);
  const exceptionClass =
    find.text(...CLASS_ATTRS) ??
    exceptionClassFromStack(stackTrace) ??
    (via === "eventbridge" ? find.text("ERROR_CODE") : via === "lambda" ? lambdaErrorClass(find) : null);
  const exceptionMessage =
    find.text(...MESSAGE_ATTRS) ??
    (via === "eventbridge" ? find.text("ERROR_MESSAGE") : via === "lambda" ? find.text("ErrorMessage") : null);
  // A server redrive leaves DeadLetterQueueSourceArn (or, on servers without it, the letter sits in
  // a DLQ that sources name): reason maxReceiveCount. Letters sent by Lambda or EventBridge say so.
  const reason =
    source || (ctx.soleSource && !via)
      ? "maxReceiveCount"
      : via === "lambda"
        ? "lambda-async-failure"
        : via === "eventbridge"
          ? "eventbridge-target-failure"
          : exceptionClass || exceptionMessage
            ? "exception"
            : null;
  const deadLetteredAt = deadLetteredAtOf(sys, reason === "maxReceiveCount");
  const history: DeathRecord[] =
    origin || reason
      ? [
          {
            queue: origin,
            reason,
            count: receiveCount,
            time: deadLetteredAt,
            exchange: null,
            routingKeys: [],
            extra: source
              ? [{ name: "DeadLetterQueueSourceArn", value: { t: "string", v: sys.DeadLetterQueueSourceArn } }]
              : [],
          },
        ]
      : [];
  return {
    failure: {
      deadLetteredAt,
      reason,
      originQueue: origin,
      exchange: null,
      routingKeys: [],
      count: receiveCount,
      deliveryCount: null,
      exceptionClass,
      exceptionMessage,
      stackTrace,
    },
    history,
  };
}

/**
 * When SQS moved the letter into this DLQ, where SQS records it: a FIFO queue's move resets the
 * letter's SentTimestamp (its enqueue time), a standard queue's keeps the first send's, so there the
 * time of the move is not recorded anywhere (AWS, "Setting-up dead-letter queue retention").
 */
export function deadLetteredAtOf(sys: Record<string, string>, movedBySqs: boolean): string | null {
  const fifo = sys.MessageGroupId !== undefined || sys.SequenceNumber !== undefined;
  return movedBySqs && fifo ? isoFromEpochMs(sys.SentTimestamp) : null;
}

/** What the letter's own attributes say of its times, for the letter view's properties. */
export function timeFacts(sys: Record<string, string>, deadLetteredAt: string | null): HeaderEntry[] {
  const sent = isoFromEpochMs(sys.SentTimestamp);
  const out: HeaderEntry[] = [];
  if (deadLetteredAt) {
    out.push({ name: "dead-lettered", value: timestampValue(Date.parse(deadLetteredAt)) });
    if (sent === deadLetteredAt)
      out.push({
        name: "sent",
        value: { t: "string", v: "not recorded: a FIFO DLQ sets SentTimestamp anew on the move" },
      });
  } else {
    // `sent` is an ISO text made by toISOString: timestampValue(Date.parse(sent)) would give it back.
    if (sent) out.push({ name: "sent", value: { t: "timestamp", v: sent } });
    out.push({
      name: "dead-lettered",
      value: {
        t: "string",
        v: sent
          ? "not recorded by SQS: a standard queue keeps SentTimestamp from the first send"
          : "not recorded by SQS",
      },
    });
  }
  return out;
}

/** Lambda writes ErrorCode as a status (e.g. "200" for a function error); an errorType inside ErrorMessage JSON is the better class. */
function lambdaErrorClass(find: HeaderLookup): string | null {
  const msg = find.text("ErrorMessage");
  if (msg?.trimStart().startsWith("{")) {
    try {
      const t = (JSON.parse(msg) as { errorType?: unknown }).errorType;
      if (typeof t === "string" && t) return t;
    } catch {
      // Not JSON: fall through.
    }
  }
  const code = find.text("ErrorCode");
  return code ? `Lambda error ${code}` : null;
}

/** One-shot `crypto.hash` where Node has it: no Hash object per letter (two digests of every body). */
const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: "hex") => string }).hash;

export function md5Hex(bytes: Uint8Array): string {
  return oneShot ? oneShot("md5", bytes, "hex") : crypto.createHash("md5").update(bytes).digest("hex");
}

/** URL-safe id: the MessageId itself when it is plain, else `m.` + base64url; `~n` for its n-th occurrence in one read. */
export function baseIdOf(messageId: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9-]{0,127}$/.test(messageId)
    ? messageId
    : `m.${Buffer.from(messageId, "utf8").toString("base64url")}`;
}

export function isSqsLetterId(id: string): boolean {
  return id.length <= 400 && /^([A-Za-z0-9][A-Za-z0-9-]{0,127}|m\.[A-Za-z0-9_-]+)(~[1-9][0-9]*)?$/.test(id);
}

/** The order the console shows: FIFO by SequenceNumber; standard by SentTimestamp, then MessageId (SQS itself has none). */
export interface SortKey {
  seq: string | null;
  sent: number;
  messageId: string;
}

export function sortKeyOf(msg: Message): SortKey {
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  return { seq: sys.SequenceNumber ?? null, sent: Number(sys.SentTimestamp ?? 0) || 0, messageId: msg.MessageId ?? "" };
}

export function compareKeys(a: SortKey, b: SortKey): number {
  if (a.seq !== null && b.seq !== null && a.seq !== b.seq)
    return a.seq.length - b.seq.length || (a.seq < b.seq ? -1 : 1);
  if (a.sent !== b.sent) return a.sent - b.sent;
  return a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0;
}

export interface LetterOptions extends FailureContext {
  maxBodyBytes?: number;
}

/** SQS epoch-millisecond attribute text as ISO 8601, or null. */
export function isoFromEpochMs(v: string | undefined): string | null {
  const ms = Number(v);
  // Out of Date's range toISOString throws, as it always did here.
  return v && Number.isFinite(ms) && ms > 0 ? (isoOfMs(ms) ?? new Date(ms).toISOString()) : null;
}

/**
 * `new Date(ms).toISOString()` (null out of range) for the last few values: a letter's
 * SentTimestamp is shown in three places and its properties, and letters received together often
 * share it.
 */
const isoSeen = new Map<number, string | null>();
function isoOfMs(ms: number): string | null {
  let iso = isoSeen.get(ms);
  if (iso === undefined) {
    const d = new Date(ms);
    iso = Number.isFinite(d.getTime()) ? d.toISOString() : null;
    if (isoSeen.size >= 64) isoSeen.clear();
    isoSeen.set(ms, iso);
  }
  return iso;
}

/** display's `timestampValue` for a number, through the cache above. */
function timestampOf(ms: number): DisplayValue {
  const iso = isoOfMs(ms);
  return iso === null ? { t: "number", v: String(ms) } : { t: "timestamp", v: iso };
}

export function toLetter(msg: Message, id: string, position: number, opts: LetterOptions): Letter {
  // SQS bodies are Unicode strings; their bytes are the UTF-8 encoding, exactly what the producer sent.
  const whole = Buffer.from(msg.Body ?? "", "utf8");
  const max = opts.maxBodyBytes;
  const truncated = max !== undefined && whole.length > max;
  const headers = decodeAttributes(msg);
  const properties = decodeProperties(msg);
  const warnings: DlqWarning[] = [];
  if (msg.MD5OfBody) {
    const actual = md5Hex(whole);
    const ok = actual === msg.MD5OfBody.toLowerCase();
    properties.push({
      name: "MD5OfBody check",
      value: { t: "string", v: ok ? "matches the body" : `MISMATCH: the body read has MD5 ${actual}` },
    });
    if (!ok)
      warnings.push({
        code: "md5_mismatch",
        label: "MD5 mismatch",
        message: `The body's MD5 (${actual}) does not match the MD5OfBody SQS reported (${msg.MD5OfBody}): the payload may have been altered in transit. Do not redrive it before checking.`,
      });
  }
  const find = headerLookup(headers);
  const via = errorSourceOf(headers, find);
  if (via)
    properties.push({
      name: "error attributes from",
      value: {
        t: "string",
        v:
          via === "lambda"
            ? "AWS Lambda (asynchronous invocation DLQ: ErrorCode, ErrorMessage, RequestID)"
            : "Amazon EventBridge (ERROR_CODE, ERROR_MESSAGE, RULE_ARN, TARGET_ARN)",
      },
    });
  const { failure, history } = failureOf(msg, headers, opts, find);
  const sys = (msg.Attributes ?? {}) as Record<string, string>;
  properties.unshift(...timeFacts(sys, failure.deadLetteredAt));
  return {
    id,
    position,
    messageId: msg.MessageId ?? null,
    correlationId: find.text("correlationId", "correlation-id", "correlation_id"),
    body: truncated ? Buffer.from(whole.subarray(0, max)) : whole,
    bodySize: whole.length,
    bodyTruncated: truncated,
    sha256: oneShot ? oneShot("sha256", whole, "hex") : sha256Hex(whole),
    contentType: find.text("contentType", "content-type", "Content-Type"),
    contentEncoding: find.text("contentEncoding", "content-encoding", "Content-Encoding"),
    properties,
    headers,
    failure,
    history,
    orderingKey: sys.MessageGroupId ?? null,
    retentionFrom: isoFromEpochMs(sys.SentTimestamp),
    // Every SQS letter comes from a ReceiveMessage, held invisible until its read ends: received once.
    readRaised: { field: "count", by: 1 },
    ...(warnings.length ? { warnings } : {}),
  };
}
