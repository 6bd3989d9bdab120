/**
 * What a DLT record becomes when it leaves: the headers of its redriven copy (markers set once
 * each), and its complete copy for the archive (`LetterCopy`, with the envelope `republish` reads).
 * Pure functions over the record; the mover decides when they are used.
 */
import { isUtf8 } from "node:buffer";
import type { IHeaders } from "kafkajs";
import { REDRIVE_HEADERS, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import { b64, encodeEnvelope } from "@/lib/brokers/envelope";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { toLetter } from "@/lib/brokers/kafka/letter";

const MARKER_NAMES = new Set<string>(Object.values(REDRIVE_HEADERS));

const textOf = (v: unknown): string | null => {
  const one = Array.isArray(v) ? v[v.length - 1] : v;
  if (one === null || one === undefined) return null;
  const buf = Buffer.isBuffer(one) ? one : one instanceof Uint8Array ? Buffer.from(one) : Buffer.from(String(one));
  return isUtf8(buf) ? buf.toString("utf8") : null;
};

/**
 * The headers of the redriven record: every original header (same values, same order) except the
 * four markers, which are set once each at the end. Throws on a header without value (kafkajs
 * cannot write one).
 */
export function redriveHeaders(
  original: Record<string, unknown> | undefined,
  markers: RedriveMarkers,
  self: { topic: string; partition: number; offset: string },
): IHeaders {
  const out: IHeaders = {};
  let previousCount = 0;
  let previousOriginal: string | null = null;
  for (const name of Object.keys(original ?? {})) {
    const v = original![name];
    if (name === REDRIVE_HEADERS.redriveCount) {
      const n = Number(textOf(v));
      if (Number.isSafeInteger(n) && n > 0) previousCount = n;
      continue;
    }
    if (name === REDRIVE_HEADERS.originalMessageId) {
      const t = textOf(Array.isArray(v) ? v[0] : v);
      if (t) previousOriginal = t;
      continue;
    }
    if (MARKER_NAMES.has(name)) continue;
    const values = Array.isArray(v) ? v : [v];
    if (values.some((x) => x === null || x === undefined)) throw new NullHeaderError(name);
    out[name] = Array.isArray(v) ? (v as Buffer[]) : (v as Buffer);
  }
  out[REDRIVE_HEADERS.redriveId] = markers.redriveId;
  out[REDRIVE_HEADERS.replayId] = markers.replayId;
  out[REDRIVE_HEADERS.redriveCount] = String(Math.max(markers.redriveCount, previousCount + 1));
  out[REDRIVE_HEADERS.originalMessageId] =
    previousOriginal ?? markers.originalMessageId ?? `${self.topic}-${self.partition}-${self.offset}`;
  return out;
}

export class NullHeaderError extends Error {
  constructor(readonly header: string) {
    super(`header ${header} has no value`);
  }
}

/** The same bytes as a Buffer, without a copy. */
export const asBuffer = (u: Uint8Array | null): Buffer | null =>
  u === null || Buffer.isBuffer(u) ? (u as Buffer | null) : Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** Everything `republish` needs to produce a discarded record again (bytes base64, header values in order). */
export interface KafkaEnvelope {
  topic: string;
  partition: number;
  offset: string;
  timestamp: string;
  key: string | null;
  /** Header name and value (base64; null: a header without value), in record order. */
  headers: Array<[string, string | null]>;
}

/** The record's headers in order, as kafkajs decoded them (one name's values stay together). */
function envelopeHeaders(h: Record<string, unknown> | undefined): Array<[string, string | null]> {
  const out: Array<[string, string | null]> = [];
  for (const [name, v] of Object.entries(h ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) {
      out.push([
        name,
        one === null || one === undefined ? null : b64(Buffer.isBuffer(one) ? one : Buffer.from(String(one))),
      ]);
    }
  }
  return out;
}

/** The complete copy of a DLT record handed to `beforeRemove` (discard, and the original of a repair). */
export function letterCopyOf(
  dlq: string,
  letterId: string,
  record: InternalRecord,
  at: { partition: number; position: number },
  configOrigin: string | null,
): LetterCopy {
  const letter = toLetter(dlq, at.partition, record, at.position, { configOrigin });
  const envelope = encodeEnvelope<KafkaEnvelope>("kafka", record.value ?? new Uint8Array(0), {
    topic: dlq,
    partition: at.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    key: record.key === null ? null : b64(record.key),
    headers: envelopeHeaders(record.headers),
  });
  return { letterId, letter, envelope };
}
