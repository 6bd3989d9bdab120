import type { DisplayValue, HeaderEntry } from "@/lib/brokers/types";

/**
 * Text forms of broker header/property values for tables and copy buttons. Pure; works in the
 * browser and on the server (atob only). Output is plain text, always rendered as React text.
 */

export function typeOf(v: DisplayValue): string {
  if (v.t === "bytes") return v.text !== undefined ? "bytes (utf-8)" : "bytes";
  if (v.t === "array") return `array[${v.v.length}]`;
  if (v.t === "table") return `table[${v.v.length}]`;
  return v.t;
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

/** "name: value" lines, for copying a whole header table. */
export function entriesText(entries: HeaderEntry[]): string {
  return entries.map((e) => `${e.name}: ${valueText(e.value).replace(/\n/g, "\n  ")}`).join("\n");
}
