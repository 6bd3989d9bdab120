/**
 * JSON values that keep their number tokens exactly. JSON.parse rounds 64-bit ids and rewrites
 * 1.50 as 1.5, which would show no diff for a changed id past 2^53 and would silently change
 * numbers a patch did not touch (DESIGN.md: a letter is never re-serialised carelessly). Before
 * parsing, every number token that would not survive a round trip is turned into a string carrying
 * a per-call random tag; serialising turns those strings back into the original tokens. Parsing
 * itself is the platform's JSON.parse (duplicate keys, `__proto__` as plain data, escapes).
 */
import { randomBytes } from "node:crypto";

export interface LosslessJson {
  value: unknown;
  /** Deepest nesting of arrays and objects. */
  depth: number;
  /** Turns a value (or part of one) back into JSON text, numbers as they were written. */
  stringify(value: unknown, indent?: string | number): string;
  /** The original token when `value` is a tagged number, else null. */
  numberToken(value: unknown): string | null;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses `text`, which must be valid JSON (JSON.parse's SyntaxError otherwise). */
export function parseLossless(text: string): LosslessJson {
  JSON.parse(text); // the validity check, with the platform's error
  const tag = `\u0000n:${randomBytes(8).toString("hex")}:`;
  const escapedTag = JSON.stringify(tag).slice(1, -1);
  const out: string[] = [];
  let depth = 0;
  let maxDepth = 0;
  let from = 0;
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "{" || c === "[") {
      depth++;
      if (depth > maxDepth) maxDepth = depth;
      i++;
    } else if (c === "}" || c === "]") {
      depth--;
      i++;
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i;
      const raw = NUMBER.exec(text)![0];
      if (JSON.stringify(Number(raw)) !== raw) {
        out.push(text.slice(from, i), `"${escapedTag}${raw}"`);
        from = i + raw.length;
      }
      i += raw.length;
    } else {
      i++;
    }
  }
  out.push(text.slice(from));
  const value = JSON.parse(out.join(""));
  const restore = new RegExp(`"${escapedTag.replace(/\\/g, "\\\\")}([^"]+)"`, "g");
  return {
    value,
    depth: maxDepth,
    stringify: (v, indent) => (JSON.stringify(v, null, indent) ?? "null").replace(restore, "$1"),
    numberToken: (v) => (typeof v === "string" && v.startsWith(tag) ? v.slice(tag.length) : null),
  };
}

/** The indentation a JSON text was written with: "" for compact, else its first indent (spaces or a tab). */
export function indentOf(text: string): string {
  const m = /^[{[]\r?\n([ \t]+)/.exec(text.trimStart());
  if (m) return m[1];
  return /\n/.test(text.trim()) ? "  " : "";
}
