/**
 * Plain text from bytes and broker values: strict UTF-8 decoding, "is this readable text", and
 * the text form of a header or property value. Pure; works in the browser and on the server
 * (atob only). The ground floor under masking and the presentation of a letter.
 */
import type { DisplayValue } from "@/lib/brokers/contract/letter";

/** Decodes strict UTF-8; null when the bytes are not valid UTF-8. A cut-off final character is tolerated when `truncated`. */
export function decodeUtf8(bytes: Uint8Array, truncated = false): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes, { stream: truncated });
  } catch {
    return null;
  }
}

/** Text that a person can read: no NUL and few control characters besides tab, newline, carriage return, form feed. */
export function looksLikeText(text: string): boolean {
  if (text.length === 0) return true;
  let controls = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return false;
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) || c === 127) controls++;
  }
  return controls / text.length < 0.01;
}

export function base64ToHex(b64: string, maxBytes = 4096): { hex: string; cut: boolean } {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    return { hex: "(undecodable)", cut: false };
  }
  const len = Math.min(bin.length, maxBytes);
  const parts: string[] = [];
  for (let i = 0; i < len; i++) parts.push(bin.charCodeAt(i).toString(16).padStart(2, "0"));
  return { hex: parts.join(" "), cut: bin.length > maxBytes };
}

/** Base64 of bytes, in chunks (a spread of a large array would overflow the call stack). Browser and server. */
export function bytesToBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  return btoa(bin);
}

/** Bytes from base64; null when it is not base64. */
export function base64ToBytes(b64: string): Uint8Array | null {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    return null;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** One-line-ish text of a value; nested arrays and tables become indented lines. */
export function valueText(v: DisplayValue, depth = 0): string {
  if (depth > 16) return "…";
  switch (v.t) {
    case "string":
    case "number":
    case "timestamp":
      return v.v;
    case "boolean":
      return v.v ? "true" : "false";
    case "null":
      return "null";
    case "bytes": {
      if (v.text !== undefined) return v.text;
      const { hex, cut } = base64ToHex(v.v);
      return cut ? `${hex} … (${v.size} bytes)` : hex;
    }
    case "array":
      if (v.v.length === 0) return "[]";
      return v.v.map((item) => `- ${valueText(item, depth + 1).replace(/\n/g, "\n  ")}`).join("\n");
    case "table":
      if (v.v.length === 0) return "{}";
      return v.v.map(([k, item]) => `${k}: ${valueText(item, depth + 1).replace(/\n/g, "\n  ")}`).join("\n");
  }
}
