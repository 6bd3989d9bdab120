/**
 * Broker-neutral helpers that turn client values into `DisplayValue`s and back into plain text.
 * Pure functions (no broker, no secrets): shared by every adapter and safe in unit tests.
 */
import { hash } from "node:crypto";
import type { DisplayValue, HeaderEntry } from "@/lib/brokers/contract/letter";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** True when `bytes` is well-formed UTF-8 (overlongs, surrogates and truncated sequences are not). */
export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The bytes as text when they are valid UTF-8, else null. */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export function sha256Hex(bytes: Uint8Array | string): string {
  // One-shot: no Hash object per call (every letter read is digested).
  return hash("sha256", bytes, "hex");
}

/** Bytes keep their exact content (base64); `text` is added when they are valid UTF-8. */
export function bytesValue(bytes: Uint8Array): DisplayValue {
  const text = utf8OrNull(bytes);
  const v = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  return text === null ? { t: "bytes", v, size: bytes.byteLength } : { t: "bytes", v, size: bytes.byteLength, text };
}

export function timestampValue(msSinceEpoch: number | bigint): DisplayValue {
  const d = new Date(Number(msSinceEpoch));
  return Number.isFinite(d.getTime())
    ? { t: "timestamp", v: d.toISOString() }
    : { t: "number", v: String(msSinceEpoch) };
}

export function numberValue(n: number | bigint): DisplayValue {
  return { t: "number", v: typeof n === "bigint" ? n.toString() : String(n) };
}

/**
 * Converts a plain JS value (as a client library hands it over) to a DisplayValue. Objects become
 * tables in key order; Dates become timestamps; Buffers become bytes.
 */
export function toDisplayValue(value: unknown, depth = 0): DisplayValue {
  if (depth > 64) return { t: "string", v: "[nested too deeply]" };
  if (value === null || value === undefined) return { t: "null" };
  if (typeof value === "string") return { t: "string", v: value };
  if (typeof value === "number" || typeof value === "bigint") return numberValue(value);
  if (typeof value === "boolean") return { t: "boolean", v: value };
  if (value instanceof Date) return timestampValue(value.getTime());
  if (value instanceof Uint8Array) return bytesValue(value);
  if (Array.isArray(value)) return { t: "array", v: value.map((x) => toDisplayValue(x, depth + 1)) };
  if (typeof value === "object") {
    return {
      t: "table",
      v: Object.entries(value as Record<string, unknown>).map(([k, x]) => [k, toDisplayValue(x, depth + 1)]),
    };
  }
  return { t: "string", v: String(value) };
}

/** A one-line text form of a value, for extracting facts (reasons, class names) and for search. */
export function displayText(value: DisplayValue | undefined | null): string | null {
  if (!value) return null;
  switch (value.t) {
    case "string":
    case "number":
    case "timestamp":
      return value.v;
    case "boolean":
      return String(value.v);
    case "null":
      return null;
    case "bytes":
      return value.text ?? null;
    case "array":
      return value.v.map((x) => displayText(x) ?? "").join(", ");
    case "table":
      return value.v.map(([k, x]) => `${k}=${displayText(x) ?? ""}`).join(", ");
  }
}

export function displayNumber(value: DisplayValue | undefined | null): number | null {
  const s = displayText(value);
  if (s === null || s.trim() === "") return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** Finds a header by exact name, falling back to a case-insensitive match. */
export function findHeader(headers: HeaderEntry[], name: string): DisplayValue | undefined {
  const exact = headers.find((h) => h.name === name);
  if (exact) return exact.value;
  const lower = name.toLowerCase();
  return headers.find((h) => h.name.toLowerCase() === lower)?.value;
}

export function headerText(headers: HeaderEntry[], ...names: string[]): string | null {
  for (const n of names) {
    const t = displayText(findHeader(headers, n));
    if (t !== null && t !== "") return t;
  }
  return null;
}

/** A value → canonical JSON text (stable, type-tagged) for fingerprints. */
export function canonicalJson(value: DisplayValue): string {
  return JSON.stringify(value);
}

export function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}
