/**
 * How a payload is shown: JSON pretty-printed, text as text, anything else as a hex dump.
 * Pure and bounded: deeply nested or huge JSON never recurses or grows without limit, and the
 * original tokens (numbers, string escapes) are kept exactly, so a 64-bit id is never rounded.
 */

import { bytesToBase64, decodeUtf8, looksLikeText } from "@/lib/text";
import { hexDumpText } from "./hex";

/**
 * A hex view carries the bytes it shows (base64, at most maxHexBytes) so the browser draws the rows
 * and copies them; masked bytes are zeroed before they are encoded and named in `maskedRanges`, so
 * a role that may not see them never receives them.
 */
export interface HexPayloadView {
  kind: "hex";
  text: string;
  note: string | null;
  base64: string;
  /** [start, end) byte ranges of `base64`'s bytes that were masked (zeroed here, never the real bytes). */
  maskedRanges: Array<[number, number]>;
}

export type PayloadView =
  | { kind: "json"; text: string; note: string | null }
  | { kind: "text"; text: string; note: string | null }
  | HexPayloadView
  /** Masking rules apply and the payload cannot be masked: `text` says why. */
  | { kind: "hidden"; text: string; note: null };

export interface PayloadViewOptions {
  /** Deeper nesting than this is shown as raw text. */
  maxDepth?: number;
  /** Characters of pretty-printed or raw text to produce at most. */
  maxChars?: number;
  /** Bytes to include in a hex dump at most. */
  maxHexBytes?: number;
  /** The bytes are a prefix of the payload (the read was cut at maxBodyBytes). */
  truncated?: boolean;
  contentType?: string | null;
}

const DEFAULTS = { maxDepth: 64, maxChars: 300_000, maxHexBytes: 64 * 1024 };

/**
 * Re-indents valid JSON without parsing it into values: walks tokens, copies strings, numbers and
 * literals verbatim. Returns null when nesting exceeds maxDepth. Assumes `text` is valid JSON.
 */
export function reindentJson(text: string, maxDepth: number, maxChars: number): { text: string; cut: boolean } | null {
  const out: string[] = [];
  let size = 0;
  let depth = 0;
  const indent = (d: number) => `\n${"  ".repeat(d)}`;
  const push = (s: string) => {
    out.push(s);
    size += s.length;
  };
  let i = 0;
  const n = text.length;
  const nextNonWs = (from: number) => {
    let j = from;
    while (j < n && (text[j] === " " || text[j] === "\n" || text[j] === "\r" || text[j] === "\t")) j++;
    return j;
  };
  while (i < n) {
    if (size > maxChars) return { text: out.join("").slice(0, maxChars), cut: true };
    const ch = text[i];
    if (ch === " " || ch === "\n" || ch === "\r" || ch === "\t") {
      i++;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      push(text.slice(i, j + 1));
      i = j + 1;
    } else if (ch === "{" || ch === "[") {
      const close = ch === "{" ? "}" : "]";
      const j = nextNonWs(i + 1);
      if (text[j] === close) {
        push(ch + close);
        i = j + 1;
      } else {
        depth++;
        if (depth > maxDepth) return null;
        push(ch + indent(depth));
        i++;
      }
    } else if (ch === "}" || ch === "]") {
      depth--;
      push(indent(depth) + ch);
      i++;
    } else if (ch === ",") {
      push(`,${indent(depth)}`);
      i++;
    } else if (ch === ":") {
      push(": ");
      i++;
    } else {
      let j = i;
      while (j < n && !" \n\r\t,:]}".includes(text[j])) j++;
      push(text.slice(i, j));
      i = j;
    }
  }
  const joined = out.join("");
  return joined.length > maxChars ? { text: joined.slice(0, maxChars), cut: true } : { text: joined, cut: false };
}

function isJson(text: string): boolean {
  const t = text.trimStart();
  if (!(t.startsWith("{") || t.startsWith("["))) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function cutText(text: string, maxChars: number): { text: string; cut: boolean } {
  return text.length > maxChars ? { text: text.slice(0, maxChars), cut: true } : { text, cut: false };
}

/** `offset  hex  |ascii|`, 16 bytes a line, as `hexdump -C` prints it. */
export function hexDump(bytes: Uint8Array, maxBytes = bytes.length): string {
  return hexDumpText(bytes, { maxBytes });
}

/** The hex view of (a prefix of) `bytes`, with `masked` byte ranges already zeroed by the caller. */
export function hexView(
  bytes: Uint8Array,
  opts: { maxHexBytes: number; note: string | null; masked?: Array<[number, number]> },
): HexPayloadView {
  const shown = bytes.subarray(0, Math.min(bytes.length, opts.maxHexBytes));
  const masked = (opts.masked ?? []).filter(([s, e]) => s < shown.length && e > s);
  return {
    kind: "hex",
    text: hexDumpText(shown, { masked }),
    note: opts.note,
    base64: bytesToBase64(shown),
    maskedRanges: masked.map(([s, e]) => [s, Math.min(e, shown.length)]),
  };
}

/** Chooses and builds the view of a payload prefix. */
export function buildPayloadView(
  bytes: Uint8Array,
  opts: PayloadViewOptions = {},
): Exclude<PayloadView, { kind: "hidden" }> {
  const maxDepth = opts.maxDepth ?? DEFAULTS.maxDepth;
  const maxChars = opts.maxChars ?? DEFAULTS.maxChars;
  const maxHexBytes = opts.maxHexBytes ?? DEFAULTS.maxHexBytes;
  const truncatedNote = opts.truncated
    ? "Only the first part of the payload was read; download the original bytes for all of it."
    : null;

  const text = decodeUtf8(bytes, opts.truncated);
  if (text !== null && looksLikeText(text)) {
    if (!opts.truncated && isJson(text)) {
      const pretty = reindentJson(text, maxDepth, maxChars);
      if (pretty) {
        return {
          kind: "json",
          text: pretty.text,
          note: pretty.cut ? "Pretty-printed view cut short; download the original bytes for all of it." : null,
        };
      }
      const raw = cutText(text, maxChars);
      return { kind: "text", text: raw.text, note: `JSON nested deeper than ${maxDepth} levels: shown as raw text.` };
    }
    const raw = cutText(text, maxChars);
    return {
      kind: "text",
      text: raw.text,
      note: truncatedNote ?? (raw.cut ? "Text cut short; download the original bytes for all of it." : null),
    };
  }
  return hexView(bytes, { maxHexBytes, note: truncatedNote });
}
