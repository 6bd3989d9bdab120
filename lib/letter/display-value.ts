import type { DisplayValue, HeaderEntry } from "@/lib/brokers/contract/letter";
import { valueText } from "@/lib/text";

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

/** "name: value" lines, for copying a whole header table. */
export function entriesText(entries: HeaderEntry[]): string {
  return entries.map((e) => `${e.name}: ${valueText(e.value).replace(/\n/g, "\n  ")}`).join("\n");
}
