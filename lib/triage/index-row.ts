import "server-only";
import { createHash } from "node:crypto";
import type { Letter } from "@/lib/brokers/types";
import { displayText } from "@/lib/brokers/display";
import { encryptPayload, payloadAad, type Keyring } from "@/lib/crypto/payload-cipher";
import { classify, groupKeyOf, type ClassificationRule } from "@/lib/triage";

/** Bytes of each payload kept (encrypted) in the index; larger payloads are stored cut, flagged. */
export const PAYLOAD_CAP_BYTES = 1024 * 1024;
/** Exception messages are kept to this many characters. */
export const MESSAGE_CAP = 4000;
/** Each header value in the index is cut to this many characters; at most HEADERS_MAX headers. */
export const HEADER_VALUE_CAP = 512;
export const HEADERS_MAX = 64;

/** One row of `triage_letters` as the batch upsert sends it (JSON, bytes as base64). */
export interface IndexRow {
  letter_id: string;
  position: number;
  kafka_partition: number | null;
  kafka_offset: string | null;
  message_id: string | null;
  dead_lettered_at: string | null;
  reason: string | null;
  origin_queue: string | null;
  exception_class: string | null;
  exception_message: string | null;
  normalized_message: string | null;
  top_frame: string | null;
  group_key: string;
  group_label: string;
  group_basis: string;
  disposition: string;
  rule_id: string | null;
  receive_count: number | null;
  headers: Record<string, string>;
  body_size: number;
  sha256: string;
  fingerprint: string;
  payload: string | null;
  payload_key_id: string | null;
  payload_truncated: boolean;
  handled_outcome: string | null;
}

/** Postgres text cannot hold NUL; cut long text. */
export function clean(s: string | null | undefined, cap = 10_000): string | null {
  if (s === null || s === undefined) return null;
  // eslint-disable-next-line no-control-regex
  const t = s.replace(/\u0000/g, "\uFFFD");
  return t.length > cap ? t.slice(0, cap) : t;
}

function headersOf(l: Letter): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of l.headers.slice(0, HEADERS_MAX)) {
    const name = clean(h.name, 200)!;
    out[name] = clean(displayText(h.value) ?? "", HEADER_VALUE_CAP)!;
  }
  return out;
}

function kafkaPosition(l: Letter): { partition: number | null; offset: string | null } {
  const p = displayText(l.properties.find((x) => x.name === "partition")?.value);
  const o = displayText(l.properties.find((x) => x.name === "offset")?.value);
  return p !== null && o !== null && /^\d+$/.test(p) && /^\d+$/.test(o) ? { partition: Number(p), offset: o } : { partition: null, offset: null };
}

export function toIndexRow(l: Letter, ctx: { connectionId: string; queue: string; rules: ClassificationRule[] | undefined; ring: Keyring; randomAccess: boolean }): IndexRow {
  const f = l.failure;
  const g = groupKeyOf({ exceptionClass: f.exceptionClass, exceptionMessage: f.exceptionMessage, stackTrace: f.stackTrace, reason: f.reason, count: f.count });
  const c = classify({ exceptionClass: f.exceptionClass, exceptionMessage: f.exceptionMessage, reason: f.reason }, ctx.rules);
  const sealed = encryptPayload(l.body, payloadAad(ctx.connectionId, ctx.queue, l.id), ctx.ring);
  const pos = ctx.randomAccess ? kafkaPosition(l) : { partition: null, offset: null };
  return {
    letter_id: l.id,
    position: l.position,
    kafka_partition: pos.partition,
    kafka_offset: pos.offset,
    message_id: clean(l.messageId, 1000),
    dead_lettered_at: f.deadLetteredAt,
    reason: clean(f.reason, 200),
    origin_queue: clean(f.originQueue, 1000),
    exception_class: clean(f.exceptionClass, 500),
    exception_message: clean(f.exceptionMessage, MESSAGE_CAP),
    normalized_message: clean(g.normalizedMessage, MESSAGE_CAP),
    top_frame: clean(g.topFrame, 1000),
    group_key: g.key,
    group_label: clean(g.label, 1000)!,
    group_basis: g.basis,
    disposition: c.disposition,
    rule_id: c.ruleId,
    receive_count: f.count,
    headers: headersOf(l),
    body_size: l.bodySize,
    sha256: l.sha256,
    // Same payload failing the same way: recognises a letter that came back after a redrive.
    fingerprint: createHash("sha256").update(`${g.key}\n${l.sha256}`).digest("hex").slice(0, 32),
    payload: sealed.data.toString("base64"),
    payload_key_id: sealed.keyId,
    payload_truncated: l.bodyTruncated,
    handled_outcome: l.handled?.outcome ?? null,
  };
}

/** Rough bytes a row adds to a batch, to bound a batch's memory as well as its length. */
export function rowWeight(r: IndexRow): number {
  return (r.payload?.length ?? 0) + (r.exception_message?.length ?? 0) + 1024;
}

/** Header names, in order of preference, that name the producer or consumer version of a letter. */
export const VERSION_HEADERS = [
  "x-app-version",
  "app-version",
  "x-producer-version",
  "x-consumer-version",
  "x-service-version",
  "__connect.errors.connector.name",
  "kafka_dlt-original-consumer-group",
] as const;
