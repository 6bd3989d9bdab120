import { createHash, hash } from "node:crypto";
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
  const { ipad, opad } = padsOf(key);
  const text = macText(f, keyId);
  const inner = Buffer.allocUnsafe(BLOCK + Buffer.byteLength(text, "utf8"));
  ipad.copy(inner, 0);
  inner.write(text, BLOCK, "utf8");
  const outer = Buffer.allocUnsafe(BLOCK + 32);
  opad.copy(outer, 0);
  hash("sha256", inner, "buffer").copy(outer, BLOCK);
  return hash("sha256", outer, "hex");
}

/**
 * HMAC-SHA256 (RFC 2104) written out: sha256((K ^ opad) || sha256((K ^ ipad) || text)), with each
 * key's two padded blocks made once. The same value as createHmac("sha256", key) (hash.test.ts),
 * which set the key up again for every row: about a third of auditMac's time in the redrive bench.
 */
const BLOCK = 64;
const pads = new WeakMap<Buffer, { ipad: Buffer; opad: Buffer }>();
function padsOf(key: Buffer): { ipad: Buffer; opad: Buffer } {
  let p = pads.get(key);
  if (!p) {
    const k = key.length > BLOCK ? createHash("sha256").update(key).digest() : key;
    const ipad = Buffer.alloc(BLOCK, 0x36);
    const opad = Buffer.alloc(BLOCK, 0x5c);
    for (let i = 0; i < k.length; i++) {
      ipad[i] ^= k[i];
      opad[i] ^= k[i];
    }
    p = { ipad, opad };
    pads.set(key, p);
  }
  return p;
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
  let out = "{";
  for (const [k, name] of MAC_KEYS) {
    const v = k === "keyId" ? keyId : linked[k] === undefined && OPTIONAL.has(k) ? null : linked[k];
    if (v === undefined) continue;
    if (out.length > 1) out += ",";
    out += name + canonicalJson(v);
  }
  return `${out}}`;
}

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
