/**
 * How a payload is shown: JSON pretty-printed, text as text, anything else as a hex dump.
 * Pure and bounded: deeply nested or huge JSON never recurses or grows without limit, and the
 * original tokens (numbers, string escapes) are kept exactly, so a 64-bit id is never rounded.
 */

import { decodeUtf8, looksLikeText } from "@/lib/text";

export type PayloadView =
  | { kind: "json"; text: string; note: string | null }
  | { kind: "text"; text: string; note: string | null }
  | { kind: "hex"; text: string; note: string | null };

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

const hex2 = (b: number) => b.toString(16).padStart(2, "0");

/** `offset | hex | ascii`, 16 bytes a line: "00000010  7b 22 61 22 ...  |{"a"...|". */
export function hexDump(bytes: Uint8Array, maxBytes = bytes.length): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, maxBytes);
  for (let off = 0; off < end; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, end));
    let hex = "";
    let ascii = "";
    for (let k = 0; k < 16; k++) {
      if (k < row.length) {
        hex += `${hex2(row[k])} `;
        ascii += row[k] >= 0x20 && row[k] < 0x7f ? String.fromCharCode(row[k]) : ".";
      } else {
        hex += "   ";
      }
      if (k === 7) hex += " ";
    }
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex} |${ascii}|`);
  }
  return lines.join("\n");
}

/** Chooses and builds the view of a payload prefix. */
export function buildPayloadView(bytes: Uint8Array, opts: PayloadViewOptions = {}): PayloadView {
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
  const dump = hexDump(bytes, maxHexBytes);
  const cut = bytes.length > maxHexBytes;
  return {
    kind: "hex",
    text: dump,
    note: cut
      ? `Showing the first ${maxHexBytes} bytes as hex; download the original bytes for all of it.`
      : truncatedNote,
  };
}
