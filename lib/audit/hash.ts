import { createHash, createHmac, createSecretKey, type KeyObject } from "node:crypto";
import type { AuditRow } from "./types";

/** prev_hash of the first row of the chain. */
export const GENESIS_HASH = "0".repeat(64);
export const MAX_DETAIL_STRING = 2048;

/** The fields a row's hash covers (everything but id, hash itself and the key id). */
export type HashedFields = Omit<AuditRow, "id" | "hash" | "keyId">;

/** JSON with object keys sorted at every depth, so the same value always serialises the same way. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  const obj = value as Record<string, unknown>;
  if (isFlatSorted(obj)) return JSON.stringify(obj);
  // One pass over the sorted keys, no intermediate arrays: this runs for every audit row written.
  let out = "{";
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/**
 * Whether `JSON.stringify(obj)` is already its canonical JSON, so one native call does what
 * canonicalJson's walk does (an audit row's details, MAC'd for every letter a redrive moves): a
 * plain object whose keys are in sorted order and whose values are all strings, finite or not
 * numbers, booleans, null or undefined (JSON.stringify writes each of those as canonicalJson does,
 * and drops undefined as it does). A key that starts with a digit may be an array index, which V8
 * lists before every other key whatever the order they were added in: such objects take the walk.
 */
function isFlatSorted(obj: Record<string, unknown>): boolean {
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) return false;
  let prev = "";
  for (const k in obj) {
    const c = k.charCodeAt(0);
    if ((c >= 0x30 && c <= 0x39) || (prev !== "" && k <= prev)) return false;
    const v = obj[k];
    const t = typeof v;
    if (v !== null && t !== "string" && t !== "number" && t !== "boolean" && t !== "undefined") return false;
    prev = k;
  }
  return true;
}

/**
 * Makes details storable and hash-stable: what jsonb gives back must hash the same as what was
 * written. Drops undefined/functions, turns bigints and dates into strings, strips NUL (jsonb
 * refuses \u0000) and truncates strings over 2 KB.
 */
export function normaliseDetails(details: Record<string, unknown> | undefined | null): Record<string, unknown> | null {
  if (!details) return null;
  const flat = flatDetails(details);
  if (flat) return flat;
  const text = JSON.stringify(details, (_key, value: unknown) => {
    if (typeof value === "bigint") return value.toString();
    if (typeof value === "string") {
      const clean = value.includes("\u0000") ? value.replaceAll("\u0000", "") : value;
      return clean.length > MAX_DETAIL_STRING
        ? `${clean.slice(0, MAX_DETAIL_STRING)}…[truncated ${clean.length - MAX_DETAIL_STRING} chars]`
        : clean;
    }
    return value;
  });
  return text === undefined ? null : (JSON.parse(text) as Record<string, unknown>);
}

/**
 * normaliseDetails for the common case, without a JSON round trip: a plain object whose values are
 * all null, booleans, finite numbers or strings already storable (no NUL, at most 2 KB), or
 * undefined (dropped). Exactly what the round trip would give (-0 becomes 0); anything else: null.
 */
function flatDetails(details: Record<string, unknown>): Record<string, unknown> | null {
  if (Object.getPrototypeOf(details) !== Object.prototype) return null;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(details)) {
    const v = details[k];
    if (k === "__proto__") return null;
    if (v === undefined) continue;
    if (v === null || typeof v === "boolean") out[k] = v;
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) return null;
      out[k] = v === 0 ? 0 : v;
    } else if (typeof v === "string") {
      if (v.length > MAX_DETAIL_STRING || v.includes("\u0000")) return null;
      out[k] = v;
    } else return null;
  }
  return out;
}

/** The fields the chain links, in the order the legacy hash and the MAC text write them. */
export function linkFields(f: HashedFields): HashedFields {
  return {
    prevHash: f.prevHash,
    operationId: f.operationId,
    scope: f.scope,
    at: f.at,
    actorId: f.actorId ?? null,
    actorEmail: f.actorEmail ?? null,
    actorRole: f.actorRole ?? null,
    action: f.action,
    outcome: f.outcome,
    connectionId: f.connectionId ?? null,
    queue: f.queue ?? null,
    target: f.target ?? null,
    requestId: f.requestId ?? null,
    ip: f.ip ?? null,
    details: f.details ?? null,
  };
}

/**
 * Legacy rows only (key_id NULL, written before the keyed chain): sha256 (hex) of the canonical
 * JSON of the row's fields, its prev_hash included. Anyone can recompute it, so it proves nothing
 * against someone who holds the database; it is kept so those rows still verify.
 */
export function auditHash(f: HashedFields): string {
  return createHash("sha256")
    .update(canonicalJson(linkFields(f)))
    .digest("hex");
}

/**
 * The chain link of a row: HMAC-SHA256 (hex) under the audit key `keyId`, over the canonical JSON
 * of the row's fields, its prev_hash and its key id. Without the key it cannot be recomputed.
 */
export function auditMac(f: HashedFields, keyId: string, key: Buffer): string {
  return createHmac("sha256", secretKeyOf(key)).update(macText(f, keyId)).digest("hex");
}

/**
 * The key as a KeyObject, imported once per key: `createHmac` given the Buffer imports it again for
 * every row (a redrive MACs one row per letter). 1.70–1.86 against 1.91–2.43 µs a MAC, 20,000 MACs
 * of audit-sized text (2026-12-06). Kept by the Buffer: a key the keyring drops takes it along.
 */
const secretKeys = new WeakMap<Buffer, KeyObject>();
function secretKeyOf(key: Buffer): KeyObject {
  let k = secretKeys.get(key);
  if (!k) {
    k = createSecretKey(key);
    secretKeys.set(key, k);
  }
  return k;
}

/** The keys of a MAC'd row, sorted as canonicalJson sorts them, each with its JSON name. */
const MAC_KEYS = (
  [
    "action",
    "actorEmail",
    "actorId",
    "actorRole",
    "at",
    "connectionId",
    "details",
    "ip",
    "keyId",
    "operationId",
    "outcome",
    "prevHash",
    "queue",
    "requestId",
    "scope",
    "target",
  ] as const
).map((k) => [k, `${JSON.stringify(k)}:`] as const);

/**
 * `canonicalJson({ ...linkFields(f), keyId })`, without building the object and sorting its keys
 * (the keys are always these, in this order: MAC_KEYS): this runs for every audit row written and
 * verified. hash.test.ts checks it against the generic form.
 */
export function macText(f: HashedFields, keyId: string): string {
  const linked = f as Partial<HashedFields> & Record<string, unknown>;
  // The usual row (text fields, flat details in sorted key order): one JSON.stringify of the fields
  // in MAC_KEYS order, which is what the walk below writes for it.
  const d = linked.details;
  if (
    (d === null || d === undefined || isFlatSorted(d)) &&
    MAC_KEYS.every(([k]) => k === "details" || isScalar(linked[k]))
  )
    return JSON.stringify({
      action: linked.action,
      actorEmail: linked.actorEmail ?? null,
      actorId: linked.actorId ?? null,
      actorRole: linked.actorRole ?? null,
      at: linked.at,
      connectionId: linked.connectionId ?? null,
      details: d ?? null,
      ip: linked.ip ?? null,
      keyId,
      operationId: linked.operationId,
      outcome: linked.outcome,
      prevHash: linked.prevHash,
      queue: linked.queue ?? null,
      requestId: linked.requestId ?? null,
      scope: linked.scope,
      target: linked.target ?? null,
    });
  let out = "{";
  for (const [k, name] of MAC_KEYS) {
    const v = k === "keyId" ? keyId : linked[k] === undefined && OPTIONAL.has(k) ? null : linked[k];
    if (v === undefined) continue;
    if (out.length > 1) out += ",";
    out += name + canonicalJson(v);
  }
  return `${out}}`;
}

const isScalar = (v: unknown) =>
  v === null || (typeof v !== "object" && typeof v !== "function" && typeof v !== "symbol");

/** The fields linkFields turns from undefined into null (the others are left out when undefined). */
const OPTIONAL = new Set<string>([
  "actorId",
  "actorEmail",
  "actorRole",
  "connectionId",
  "queue",
  "target",
  "requestId",
  "ip",
  "details",
]);
