/** A fetched Kafka record → a broker-neutral `Letter`. */
import * as crypto from "node:crypto";
import type { HeaderEntry, Letter } from "@/lib/brokers/contract/letter";
import { displayText, sha256Hex } from "@/lib/brokers/display";
import {
  bytesValueOf,
  decodeKafkajsHeaders,
  failureFromHeaders,
  isoOfMs,
  originOf,
  timestampOfMs,
} from "@/lib/brokers/kafka/headers";
import { letterIdOf } from "@/lib/brokers/kafka/discovery";
import { deathReason } from "@/lib/brokers/kafka/failure-words";
import { isMetadataOnly } from "@/lib/brokers/kafka/share-dlq";

export interface KafkaRecordLike {
  offset: string;
  timestamp: string;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers?: Record<string, unknown>;
  batchContext?: { timestampType?: number };
}

const withLower = (names: string[]) => names.map((n) => [n, n.toLowerCase()] as const);
/** Headers read as a record's message id (any case); a repair gives each of them the new id. */
export const MESSAGE_ID_NAMES = ["message-id", "messageId", "message_id", "x-message-id", "ce_id"];
const MESSAGE_ID_HEADERS = withLower(MESSAGE_ID_NAMES);
const CORRELATION_HEADERS = withLower(["correlation-id", "correlationId", "x-correlation-id", "kafka_correlationId"]);
const CONTENT_TYPE_HEADERS = withLower(["content-type", "contentType", "ce_datacontenttype"]);
/** Every name the three lookups above ask for, lower-cased: most letters carry none of them. */
const ASKED = new Set([...MESSAGE_ID_HEADERS, ...CORRELATION_HEADERS, ...CONTENT_TYPE_HEADERS].map(([, l]) => l));

/**
 * The message id, correlation id and content type of these headers. One pass first: when no
 * header's name is one of them in any case (most dead letters), all three are null without the
 * per-name lookups; otherwise `headerTextOf` as before, sharing the lower-cased names.
 */
function idHeadersOf(headers: HeaderEntry[]): {
  messageId: string | null;
  correlationId: string | null;
  contentType: string | null;
} {
  let lower: string[] | null = null;
  for (let i = 0; i < headers.length; i++) {
    const name = headers[i].name;
    if (ASKED.has(lowerOnlyIfNeeded(name))) {
      lower = headers.map((h) => h.name.toLowerCase());
      break;
    }
  }
  if (lower === null) return { messageId: null, correlationId: null, contentType: null };
  return {
    messageId: headerTextOf(headers, MESSAGE_ID_HEADERS, lower),
    correlationId: headerTextOf(headers, CORRELATION_HEADERS, lower),
    contentType: headerTextOf(headers, CONTENT_TYPE_HEADERS, lower),
  };
}

/**
 * `name.toLowerCase()`, but the name itself when it is ASCII without capitals (most header names,
 * e.g. Spring's `kafka_dlt-*`): V8 builds a new string for every `toLowerCase` call.
 */
function lowerOnlyIfNeeded(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0x7f || (c >= 0x41 && c <= 0x5a)) return name.toLowerCase();
  }
  return name;
}

export function toLetter(
  topic: string,
  partition: number,
  record: KafkaRecordLike,
  position: number,
  opts: {
    maxBodyBytes?: number;
    configOrigin: string | null;
    handled?: { at: Date; outcome: "redriven" | "discarded" };
  },
): Letter {
  // The per-record path of every read (a 100k-record stream runs it 100k times): each header is
  // decoded once, the origin found once, a timestamp formatted once per millisecond, no copies.
  const headers = decodeKafkajsHeaders(record.headers);
  const value = record.value ?? EMPTY;
  const max = opts.maxBodyBytes;
  const truncated = max !== undefined && value.byteLength > max;
  const tsMs = Number(record.timestamp);
  const tsValid = Number.isFinite(tsMs) && tsMs >= 0;
  const iso = tsValid ? isoOfMs(tsMs) : null;
  const origin = originOf(headers);
  const key = record.key === null ? null : bytesValueOf(record.key);
  const properties: HeaderEntry[] = [
    { name: "topic", value: { t: "string", v: topic } },
    { name: "partition", value: { t: "number", v: String(partition) } },
    { name: "offset", value: { t: "number", v: record.offset } },
    { name: "key", value: key === null ? { t: "null" } : key },
    { name: "timestamp", value: tsValid ? timestampOfMs(tsMs) : { t: "number", v: record.timestamp } },
  ];
  const tsType = record.batchContext?.timestampType;
  if (tsType === 0 || tsType === 1)
    properties.push({
      name: "timestampType",
      value: { t: "string", v: tsType === 1 ? "LogAppendTime" : "CreateTime" },
    });
  // A share group's DLQ record without key and value is not a tombstone: it says where the original is.
  const shareMetadataOnly = origin.convention === "share" && isMetadataOnly(record);
  if (shareMetadataOnly)
    properties.push({
      name: "record data",
      value: { t: "string", v: "metadata only: the original record is in its topic, at the original offset" },
    });
  else if (record.value === null) properties.push({ name: "tombstone", value: { t: "boolean", v: true } });
  const extra: HeaderEntry[] = [];
  if (origin.convention) properties.push({ name: "convention", value: { t: "string", v: origin.convention } });
  if (origin.topic) properties.push({ name: "original topic", value: { t: "string", v: origin.topic } });
  if (origin.partition)
    pushBoth(properties, extra, { name: "original partition", value: { t: "number", v: origin.partition } });
  if (origin.offset) pushBoth(properties, extra, { name: "original offset", value: { t: "number", v: origin.offset } });
  if (origin.group)
    pushBoth(properties, extra, {
      name: GROUP_LABEL[origin.convention ?? "spring"] ?? "original consumer group",
      value: { t: "string", v: origin.group },
    });
  const failure = failureFromHeaders(headers, tsValid ? tsMs : null, opts.configOrigin, origin);
  if (failure.deliveryCount !== null)
    properties.push({ name: "delivery count", value: { t: "number", v: String(failure.deliveryCount) } });
  const keyText = key === null ? null : displayText(key);
  const ids = idHeadersOf(headers);
  const letter: Letter = {
    id: letterIdOf(partition, record.offset),
    position,
    messageId: ids.messageId,
    correlationId: ids.correlationId,
    // Copy a cut body so the whole fetch buffer can be collected.
    body: truncated ? Buffer.from(value.subarray(0, max)) : value,
    bodySize: value.byteLength,
    bodyTruncated: truncated,
    sha256: sha256Of(value),
    contentType: ids.contentType,
    contentEncoding: null,
    properties,
    headers,
    failure,
    history: origin.convention
      ? [
          {
            queue: origin.topic,
            reason:
              origin.convention === "share" ? failure.reason : deathReason(failure.reason, failure.exceptionClass),
            count: origin.convention === "share" ? failure.deliveryCount : null,
            time: iso,
            exchange: null,
            routingKeys: [],
            extra,
          },
        ]
      : [],
    orderingKey: record.key === null ? null : (keyText ?? `base64:${Buffer.from(record.key).toString("base64")}`),
  };
  if (opts.handled) letter.handled = { at: opts.handled.at.toISOString(), outcome: opts.handled.outcome };
  return letter;
}

const EMPTY = new Uint8Array(0);
const GROUP_LABEL: Record<string, string> = { connect: "connector", share: "share group" };

function pushBoth(a: HeaderEntry[], b: HeaderEntry[], entry: HeaderEntry) {
  a.push(entry);
  b.push(entry);
}

/** The payload's sha256 in hex (one-shot `crypto.hash` where Node has it: no Hash object per record). */
const oneShot = (crypto as { hash?: (alg: string, data: Uint8Array, enc: "hex") => string }).hash;
export const sha256Of = (bytes: Uint8Array): string => (oneShot ? oneShot("sha256", bytes, "hex") : sha256Hex(bytes));

/**
 * display's `headerText(headers, ...names)`: per name in order, the exact header else a
 * case-insensitive one, the first non-empty text wins. Lower-cases each header name once, not once
 * per name asked for.
 */
function headerTextOf(
  headers: HeaderEntry[],
  names: ReadonlyArray<readonly [string, string]>,
  lowerNames?: string[],
): string | null {
  if (!headers.length) return null;
  let lower: string[] | null = lowerNames ?? null;
  for (const [name, lowerName] of names) {
    let v: HeaderEntry["value"] | undefined;
    for (let i = 0; i < headers.length; i++)
      if (headers[i].name === name) {
        v = headers[i].value;
        break;
      }
    if (v === undefined) {
      lower ??= headers.map((h) => h.name.toLowerCase());
      const i = lower.indexOf(lowerName);
      if (i >= 0) v = headers[i].value;
    }
    const t = displayText(v);
    if (t !== null && t !== "") return t;
  }
  return null;
}
