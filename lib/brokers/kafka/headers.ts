/**
 * Kafka record headers → `HeaderEntry`s and `FailureInfo`, for the three dead-lettering conventions
 * in use. Pure functions over exact bytes (no broker): unit-tested with byte-exact fixtures.
 *
 * - Spring Kafka's DeadLetterPublishingRecoverer (`kafka_dlt-*`): texts in UTF-8, but the original
 *   partition is a big-endian int32 and the original offset and timestamp big-endian int64.
 * - Kafka Connect's DeadLetterQueueReporter (`__connect.errors.*`): every value UTF-8 text
 *   (partition, offset and task id are decimal text).
 * - Kafka Streams (KIP-1034, `__streams.errors.*`): UTF-8 text; a null exception message is a
 *   header with a null value.
 *
 * - Share groups' broker-side DLQ (KIP-1191, Kafka 4.4, `__dlq.errors.*`): UTF-8 text, see share-dlq.ts.
 *
 * Anything else: text when the bytes are valid UTF-8, otherwise bytes (shown as hex).
 */
import type { DisplayValue, FailureInfo, HeaderEntry } from "@/lib/brokers/contract/letter";
import { isUtf8 } from "node:buffer";
import { displayText } from "@/lib/brokers/display";
import { SHARE_PREFIX, shareFailureOf } from "@/lib/brokers/kafka/share-dlq";
import { connectReason, springException, springReason, STREAMS_REASON } from "@/lib/brokers/kafka/failure-words";

/** A header as it came off the wire, in record order; a null value is a header without value. */
export type RawHeader = [name: string, value: Uint8Array | null];

export const SPRING = {
  exceptionFqcn: "kafka_dlt-exception-fqcn",
  causeFqcn: "kafka_dlt-exception-cause-fqcn",
  message: "kafka_dlt-exception-message",
  stacktrace: "kafka_dlt-exception-stacktrace",
  keyExceptionFqcn: "kafka_dlt-key-exception-fqcn",
  keyMessage: "kafka_dlt-key-exception-message",
  keyStacktrace: "kafka_dlt-key-exception-stacktrace",
  originalTopic: "kafka_dlt-original-topic",
  originalPartition: "kafka_dlt-original-partition",
  originalOffset: "kafka_dlt-original-offset",
  originalTimestamp: "kafka_dlt-original-timestamp",
  originalTimestampType: "kafka_dlt-original-timestamp-type",
  originalConsumerGroup: "kafka_dlt-original-consumer-group",
} as const;

export const CONNECT = {
  topic: "__connect.errors.topic",
  partition: "__connect.errors.partition",
  offset: "__connect.errors.offset",
  connectorName: "__connect.errors.connector.name",
  taskId: "__connect.errors.task.id",
  stage: "__connect.errors.stage",
  className: "__connect.errors.class.name",
  exceptionClass: "__connect.errors.exception.class.name",
  exceptionMessage: "__connect.errors.exception.message",
  exceptionStacktrace: "__connect.errors.exception.stacktrace",
} as const;

export const STREAMS = {
  exception: "__streams.errors.exception",
  message: "__streams.errors.message",
  stacktrace: "__streams.errors.stacktrace",
  topic: "__streams.errors.topic",
  partition: "__streams.errors.partition",
  offset: "__streams.errors.offset",
} as const;

/** Spring's binary headers: name → width in bytes and how to show the number. */
const SPRING_BINARY: Record<string, { width: 4 | 8; timestamp: boolean }> = {
  [SPRING.originalPartition]: { width: 4, timestamp: false },
  [SPRING.originalOffset]: { width: 8, timestamp: false },
  [SPRING.originalTimestamp]: { width: 8, timestamp: true },
};

/**
 * display's `bytesValue`, same result, several times faster on the small values of headers and keys:
 * Node's `isUtf8` (the same well-formedness TextDecoder's fatal mode checks) then a plain decode,
 * instead of a throwing TextDecoder per value. Like TextDecoder, a leading BOM is not part of the text.
 */
export function bytesValueOf(bytes: Uint8Array): DisplayValue {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v = buf.toString("base64");
  if (!isUtf8(buf)) return { t: "bytes", v, size: buf.byteLength };
  let text = buf.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { t: "bytes", v, size: buf.byteLength, text };
}

/** Big-endian signed integer of exactly 4 or 8 bytes, as exact decimal text; null for any other length. */
export function bigEndianInt(bytes: Uint8Array, width: 4 | 8): bigint | null {
  if (bytes.byteLength !== width) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return width === 4 ? BigInt(view.getInt32(0, false)) : view.getBigInt64(0, false);
}

/**
 * An 8-byte big-endian signed integer as a number when it lies in [-2^53, 2^53), where every
 * integer is a double exactly (its decimal text is then the BigInt's); null beyond.
 */
function safeInt64(b: Uint8Array): number | null {
  const hi = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
  if (hi < -0x200000 || hi >= 0x200000) return null;
  const lo = ((b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7]) >>> 0;
  return hi * 0x100000000 + lo;
}

/** One header value for display: Spring's binary integers decoded, everything else text or bytes. */
export function decodeHeaderValue(name: string, value: Uint8Array | null): DisplayValue {
  if (value === null) return { t: "null" };
  const binary = SPRING_BINARY[name];
  if (binary) {
    // A wrong width is shown as the bytes it is, never guessed at.
    if (value.byteLength === binary.width) {
      if (binary.width === 4 && !binary.timestamp) {
        // The common case (original partition): no DataView or BigInt per record.
        const n = (value[0] << 24) | (value[1] << 16) | (value[2] << 8) | value[3] | 0;
        return { t: "number", v: String(n) };
      }
      // Offsets and timestamps fit a double exactly: read them without a DataView and a BigInt.
      const safe = binary.width === 8 ? safeInt64(value) : null;
      if (!binary.timestamp)
        return { t: "number", v: safe !== null ? String(safe) : bigEndianInt(value, binary.width)!.toString() };
      // display's timestampValue(n), through the cache (a batch's records mostly share their original timestamp too).
      const n = safe ?? bigEndianInt(value, binary.width)!;
      const iso = isoOfMs(Number(n));
      return iso === null ? { t: "number", v: n.toString() } : { t: "timestamp", v: iso };
    }
  }
  return bytesValueOf(value);
}

export function decodeHeaders(raw: RawHeader[]): HeaderEntry[] {
  return raw.map(([name, value]) => ({ name, value: decodeHeaderValue(name, value) }));
}

/** kafkajs's decoded headers (a repeated name becomes an array) → raw headers in record order. */
export function rawHeadersFromKafkajs(headers: Record<string, unknown> | undefined | null): RawHeader[] {
  const out: RawHeader[] = [];
  if (!headers) return out;
  for (const [name, v] of Object.entries(headers)) {
    for (const one of Array.isArray(v) ? v : [v]) {
      if (one === null || one === undefined) out.push([name, null]);
      else if (one instanceof Uint8Array) out.push([name, one]);
      else out.push([name, Buffer.from(String(one), "utf8")]);
    }
  }
  return out;
}

/** `decodeHeaders(rawHeadersFromKafkajs(headers))` in one pass (the per-record path). */
export function decodeKafkajsHeaders(headers: Record<string, unknown> | undefined | null): HeaderEntry[] {
  const out: HeaderEntry[] = [];
  if (!headers) return out;
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    const v = headers[name];
    if (Array.isArray(v)) for (const one of v) out.push({ name, value: decodeHeaderValue(name, rawValue(one)) });
    else out.push({ name, value: decodeHeaderValue(name, rawValue(v)) });
  }
  return out;
}

function rawValue(one: unknown): Uint8Array | null {
  if (one === null || one === undefined) return null;
  return one instanceof Uint8Array ? one : Buffer.from(String(one), "utf8");
}

/** The last two answers of `isoOfMs`: [ms, iso] each, the older one replaced first. */
const isoCache: Array<[number, string | null]> = [
  [Number.NaN, null],
  [Number.NaN, null],
];
let isoOlder = 0;

/**
 * `new Date(ms).toISOString()`, or null when out of Date's range. Records of one batch mostly share
 * their millisecond, so the last two answers are kept (this runs several times per record, for its
 * own timestamp and for the original timestamp its headers name).
 */
export function isoOfMs(ms: number): string | null {
  if (isoCache[0][0] === ms) return isoCache[0][1];
  if (isoCache[1][0] === ms) return isoCache[1][1];
  const d = new Date(ms);
  const iso = Number.isFinite(d.getTime()) ? d.toISOString() : null;
  isoCache[isoOlder] = [ms, iso];
  isoOlder = 1 - isoOlder;
  return iso;
}

/** Same as display's `timestampValue` for a number, through the cache. */
export function timestampOfMs(ms: number): DisplayValue {
  const iso = isoOfMs(ms);
  return iso === null ? { t: "number", v: String(ms) } : { t: "timestamp", v: iso };
}

/** Text of the first (or last) header with this name; null when absent, empty or not UTF-8. */
function text(headers: HeaderEntry[], name: string, which: "first" | "last" = "first"): string | null {
  let h: HeaderEntry | undefined;
  if (which === "first") {
    for (let i = 0; i < headers.length && !h; i++) if (headers[i].name === name) h = headers[i];
  } else {
    for (let i = headers.length - 1; i >= 0 && !h; i--) if (headers[i].name === name) h = headers[i];
  }
  const t = h ? displayText(h.value) : null;
  return t === null || t === "" ? null : t;
}

export type Convention = "share" | "spring" | "connect" | "streams" | null;

export function conventionOf(headers: HeaderEntry[]): Convention {
  // One pass; a share group's broker-side DLQ wins (the broker copies no original headers, so its
  // headers are the record's own), then Spring over Connect over Streams when a letter carries several.
  let found: Convention = null;
  for (const h of headers) {
    const n = h.name;
    if (n.startsWith(SHARE_PREFIX)) return "share";
    if (n.startsWith("kafka_dlt-")) found = "spring";
    else if (found !== "spring" && found !== "connect" && n.startsWith("__connect.errors.")) found = "connect";
    else if (found === null && n.startsWith("__streams.errors.")) found = "streams";
  }
  return found;
}

export interface Origin {
  convention: Convention;
  topic: string | null;
  partition: string | null;
  offset: string | null;
  /** Spring: original consumer group; Connect: connector name and task; share: the share group. */
  group: string | null;
}

export function originOf(headers: HeaderEntry[]): Origin {
  const convention = conventionOf(headers);
  switch (convention) {
    case "share": {
      const f = shareFailureOf(headers);
      return { convention, topic: f.topic, partition: f.partition, offset: f.offset, group: f.group };
    }
    case "spring":
      // Spring keeps the first dead-lettering's original-* headers when a letter dies again.
      return {
        convention,
        topic: text(headers, SPRING.originalTopic),
        partition: text(headers, SPRING.originalPartition),
        offset: text(headers, SPRING.originalOffset),
        group: text(headers, SPRING.originalConsumerGroup),
      };
    case "connect": {
      const connector = text(headers, CONNECT.connectorName);
      const task = text(headers, CONNECT.taskId);
      return {
        convention,
        topic: text(headers, CONNECT.topic),
        partition: text(headers, CONNECT.partition),
        offset: text(headers, CONNECT.offset),
        group: connector ? (task ? `${connector} (task ${task})` : connector) : null,
      };
    }
    case "streams":
      return {
        convention,
        topic: text(headers, STREAMS.topic),
        partition: text(headers, STREAMS.partition),
        offset: text(headers, STREAMS.offset),
        group: null,
      };
    default:
      return { convention: null, topic: null, partition: null, offset: null, group: null };
  }
}

/** Why the letter died, from its headers; `deadLetteredAt` is the DLT record's own timestamp. */
export function failureFromHeaders(
  headers: HeaderEntry[],
  recordTimestampMs: number | null,
  configOrigin: string | null,
  origin: Origin = originOf(headers),
): FailureInfo {
  let exceptionClass: string | null = null;
  let exceptionMessage: string | null = null;
  let stackTrace: string | null = null;
  let reason: string | null = null;
  let deliveryCount: number | null = null;
  let wrapperClass: string | null = null;
  switch (origin.convention) {
    case "share": {
      // The broker gives no exception: its message says which of its two reasons archived the record.
      const f = shareFailureOf(headers);
      reason = f.reason;
      exceptionMessage = f.message;
      deliveryCount = f.deliveryCount;
      break;
    }
    case "spring": {
      // The most recent failure is the last exception header (Spring may keep earlier ones).
      const valueClass = text(headers, SPRING.exceptionFqcn, "last");
      const keyClass = text(headers, SPRING.keyExceptionFqcn, "last");
      stackTrace = text(headers, SPRING.stacktrace, "last") ?? text(headers, SPRING.keyStacktrace, "last");
      const resolved = springException({
        exceptionClass: valueClass ?? keyClass,
        causeClass: text(headers, SPRING.causeFqcn, "last"),
        message: text(headers, SPRING.message, "last") ?? text(headers, SPRING.keyMessage, "last"),
        stackTrace,
      });
      ({ exceptionClass, exceptionMessage, wrapperClass } = resolved);
      reason = springReason({ keyException: keyClass !== null && valueClass === null, exceptionClass });
      break;
    }
    case "connect": {
      exceptionClass = text(headers, CONNECT.exceptionClass);
      exceptionMessage = text(headers, CONNECT.exceptionMessage);
      stackTrace = text(headers, CONNECT.exceptionStacktrace);
      reason = connectReason(text(headers, CONNECT.stage));
      break;
    }
    case "streams":
      exceptionClass = text(headers, STREAMS.exception);
      exceptionMessage = text(headers, STREAMS.message);
      stackTrace = text(headers, STREAMS.stacktrace);
      reason = STREAMS_REASON;
      break;
  }
  return {
    deadLetteredAt: recordTimestampMs === null ? null : isoOfMs(recordTimestampMs),
    reason,
    originQueue: origin.topic ?? configOrigin,
    exchange: null,
    routingKeys: [],
    count: null,
    deliveryCount,
    exceptionClass,
    exceptionMessage,
    stackTrace,
    ...(wrapperClass ? { wrapperClass } : {}),
  };
}
