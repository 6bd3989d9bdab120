/**
 * Share-group dead letters (KIP-1191, Kafka 4.4 with `share.version=2`): a share group with
 * `errors.deadletterqueue.topic.name` set has the broker write each record it archives as rejected
 * or past `share.delivery.count.limit` to that topic, with UTF-8 text headers `__dlq.errors.*`. By
 * default the DLQ record holds metadata only (key and value null); with the group's
 * `errors.deadletterqueue.copy.record.enable` it holds the key and value, never the original
 * headers. Its timestamp is the time the broker wrote it. Pure functions over decoded headers.
 */
import type { HeaderEntry } from "@/lib/brokers/contract/letter";
import { displayText } from "@/lib/brokers/display";

export const SHARE = {
  topic: "__dlq.errors.topic",
  partition: "__dlq.errors.partition",
  offset: "__dlq.errors.offset",
  group: "__dlq.errors.group",
  deliveryCount: "__dlq.errors.delivery.count",
  message: "__dlq.errors.message",
} as const;

export const SHARE_PREFIX = "__dlq.errors.";

/** The broker's two reasons, as the broker words them (Kafka 4.4.0). */
const REASONS: Record<string, string> = {
  "Offset rejected by client.": "rejected",
  "Offset delivery count exceeded the threshold.": "delivery_limit",
};

function text(headers: HeaderEntry[], name: string): string | null {
  for (const h of headers) {
    if (h.name !== name) continue;
    const t = displayText(h.value);
    return t === null || t === "" ? null : t;
  }
  return null;
}

export interface ShareFailure {
  topic: string | null;
  partition: string | null;
  offset: string | null;
  group: string | null;
  deliveryCount: number | null;
  /** `rejected` or `delivery_limit`; the broker's own words when it gives another. */
  reason: string | null;
  /** The broker's message, as written. */
  message: string | null;
}

export function shareFailureOf(headers: HeaderEntry[]): ShareFailure {
  const message = text(headers, SHARE.message);
  const count = Number(text(headers, SHARE.deliveryCount));
  const partition = text(headers, SHARE.partition);
  const offset = text(headers, SHARE.offset);
  return {
    topic: text(headers, SHARE.topic),
    partition: partition !== null && /^\d{1,10}$/.test(partition) ? partition : null,
    offset: offset !== null && /^\d{1,19}$/.test(offset) ? offset : null,
    group: text(headers, SHARE.group),
    deliveryCount:
      text(headers, SHARE.deliveryCount) !== null && Number.isSafeInteger(count) && count >= 0 ? count : null,
    reason: message === null ? null : (REASONS[message] ?? message),
    message,
  };
}

/** A DLQ record of a share group: it carries `__dlq.errors.topic`. */
export const isShareDeadLetter = (headers: Record<string, unknown> | undefined | null): boolean =>
  !!headers && Object.hasOwn(headers, SHARE.topic);

/** The record holds no data of its own (key and value null): the original is only in its topic. */
export const isMetadataOnly = (record: { key: Uint8Array | null; value: Uint8Array | null }): boolean =>
  record.key === null && record.value === null;

/** Where the original record of a share-group dead letter is, from its raw (kafkajs) headers; null when incomplete. */
export function originalRef(
  headers: Record<string, unknown> | undefined | null,
): { topic: string; partition: number; offset: bigint } | null {
  if (!isShareDeadLetter(headers)) return null;
  const one = (name: string): string | null => {
    const v = headers![name];
    const x = Array.isArray(v) ? v[0] : v;
    if (x === null || x === undefined) return null;
    return Buffer.isBuffer(x) || x instanceof Uint8Array ? Buffer.from(x).toString("utf8") : String(x);
  };
  const topic = one(SHARE.topic);
  const partition = one(SHARE.partition);
  const offset = one(SHARE.offset);
  if (!topic || !partition || !offset || !/^\d{1,9}$/.test(partition) || !/^\d{1,19}$/.test(offset)) return null;
  return { topic, partition: Number(partition), offset: BigInt(offset) };
}

/** What looking up the original record found. */
export type OriginalLookup =
  | {
      kind: "found";
      record: {
        offset: string;
        timestamp: string;
        key: Uint8Array | null;
        value: Uint8Array | null;
        headers?: Record<string, unknown>;
      };
    }
  /** Below the log start, the topic gone, or another record at that offset now. */
  | { kind: "gone"; why: string };

export interface RecordData {
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: Record<string, unknown>;
}

/**
 * The data a share-group dead letter stands for: the original record's key, value and headers
 * while it is retained. A record found at that offset is taken as the original only when it is
 * not younger than the DLQ record (a topic deleted and created again has other records at the
 * same offsets) and, where the DLQ record holds a copy, when key and value are the copy's.
 * Without the original: the copy's key and value (the original's headers are lost), or, for a
 * metadata-only record, nothing.
 */
export function joinOriginal(
  dlqRecord: { timestamp: string; key: Uint8Array | null; value: Uint8Array | null },
  lookup: OriginalLookup,
):
  | { data: RecordData; original: true }
  | { data: RecordData; original: false; why: string }
  | { data: null; why: string } {
  let why: string;
  if (lookup.kind === "found") {
    const o = lookup.record;
    const younger = Number(o.timestamp) > Number(dlqRecord.timestamp);
    const copyDiffers =
      !isMetadataOnly(dlqRecord) && (!sameBytes(o.key, dlqRecord.key) || !sameBytes(o.value, dlqRecord.value));
    if (!younger && !copyDiffers)
      return { data: { key: o.key, value: o.value, headers: o.headers ?? {} }, original: true };
    why = younger
      ? "the record now at that offset is younger than the dead letter (the topic was created again)"
      : "the record now at that offset is not the one the dead letter copied";
  } else {
    why = lookup.why;
  }
  if (isMetadataOnly(dlqRecord)) return { data: null, why };
  return { data: { key: dlqRecord.key, value: dlqRecord.value, headers: {} }, original: false, why };
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** The letter warning of a dead letter whose original is no longer retained. */
export function originalGoneWarning(
  ref: { topic: string; partition: number; offset: bigint },
  why: string,
  copied: boolean,
) {
  const where = `offset ${ref.offset} of partition ${ref.partition} of "${ref.topic}"`;
  return {
    code: "original_gone",
    label: "original no longer retained",
    message: copied
      ? `The original record (${where}) is no longer retained (${why}). This dead letter holds a copy of its key and value, but not its headers: a redrive publishes it without the original headers.`
      : `The original record (${where}) is no longer retained (${why}). This dead letter holds only where it was, not its data: it cannot be redriven.`,
  };
}

/** Reason of a failed redrive of a metadata-only letter whose original is gone. */
export const originalGoneReason = (ref: { topic: string; partition: number; offset: bigint }, why: string) =>
  `The original record (offset ${ref.offset} of partition ${ref.partition} of "${ref.topic}") is no longer retained (${why}), and this dead letter holds only its metadata: there is nothing to redrive. It is still in the DLQ.`;
