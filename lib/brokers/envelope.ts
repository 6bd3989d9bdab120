/**
 * The envelope of a discarded letter (`LetterCopy.envelope`): UTF-8 JSON, versioned, with the
 * broker kind, the body's SHA-256 and size, and the adapter's own fields (bytes as base64). Only the
 * adapter that wrote an envelope reads its fields; everything above `lib/brokers` stores it as is.
 */
import { sha256Hex } from "@/lib/brokers/display";
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import type { RepublishRequest, RepublishResult } from "@/lib/brokers/contract/remove";

export const ENVELOPE_VERSION = 1;

export interface EnvelopeHead {
  v: number;
  kind: BrokerKind;
  sha256: string;
  size: number;
}

export function encodeEnvelope<F extends object>(kind: BrokerKind, body: Uint8Array, fields: F): Uint8Array {
  const head: EnvelopeHead = { v: ENVELOPE_VERSION, kind, sha256: sha256Hex(body), size: body.byteLength };
  return new TextEncoder().encode(JSON.stringify({ ...head, ...fields }));
}

/** The envelope's fields, after checking its kind and that `body` is the body it was made for; else why not. */
export function openEnvelope<F extends object>(
  kind: BrokerKind,
  envelope: Uint8Array,
  body: Uint8Array,
): { fields: EnvelopeHead & F } | { reason: string } {
  let parsed: EnvelopeHead & F;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(envelope)) as EnvelopeHead & F;
  } catch {
    return {
      reason: "The archived copy's envelope cannot be read (it is not one the console wrote). Nothing was published.",
    };
  }
  if (parsed?.v !== ENVELOPE_VERSION)
    return {
      reason: `The archived copy's envelope has version ${String(parsed?.v)}, which this console does not know. Nothing was published.`,
    };
  if (parsed.kind !== kind)
    return {
      reason: `The archived copy comes from a ${parsed.kind} DLQ and cannot be put into a ${kind} one. Nothing was published.`,
    };
  if (body.byteLength !== parsed.size || sha256Hex(body) !== parsed.sha256) {
    return {
      reason:
        "The archived payload does not match the checksum recorded when the letter was discarded. Nothing was published.",
    };
  }
  return { fields: parsed };
}

export const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
export const unb64 = (s: string) => Buffer.from(s, "base64");

/** A republish request that did not go back, with the operator-worded reason. */
export function republishFailed(req: RepublishRequest, reason: string): RepublishResult {
  return { id: req.id, outcome: "failed", how: null, letterId: null, reason };
}

/**
 * The requests in order with their envelopes opened (kind and body checked); one that does not fit
 * comes as its "failed" result. Stops when `signal` is aborted.
 */
export function* openEach<F extends object>(
  kind: BrokerKind,
  requests: RepublishRequest[],
  signal?: AbortSignal,
): Generator<{ req: RepublishRequest; env: EnvelopeHead & F } | { failed: RepublishResult }> {
  for (const req of requests) {
    if (signal?.aborted) return;
    const opened = openEnvelope<F>(kind, req.envelope, req.body);
    yield "reason" in opened ? { failed: republishFailed(req, opened.reason) } : { req, env: opened.fields };
  }
}
