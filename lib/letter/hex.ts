/**
 * The rows of a hex view (`xxd` / `hexdump -C`): offset, 16 bytes in hex, and their ASCII. Pure and
 * bounded by the caller's byte count. Masked bytes are never printed: their cells read `▒▒` and `▒`,
 * which no real byte prints as (the ASCII column shows only 0x20-0x7e, other bytes as ".").
 */

export const HEX_ROW_BYTES = 16;
export const MASKED_HEX = "▒▒";
export const MASKED_ASCII = "▒";

export interface HexRow {
  /** Eight hex digits, or more past 4 GiB. */
  offset: string;
  /** 16 cells ("7b", or "▒▒" when masked, or "  " past the end) separated by spaces, an extra space after the 8th. */
  hex: string;
  /** The row's bytes as ASCII, "." for non-printable, "▒" for masked. */
  ascii: string;
  /** Whether any byte of the row is masked. */
  masked: boolean;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
const PRINTABLE = Array.from({ length: 256 }, (_, b) => String.fromCharCode(b));

/** The rows for `bytes[0, maxBytes)`. */
export function hexRows(
  bytes: Uint8Array,
  opts: { maxBytes?: number; masked?: ReadonlyArray<readonly [number, number]> } = {},
): HexRow[] {
  const end = Math.min(bytes.length, opts.maxBytes ?? bytes.length);
  const maskedAt = new Uint8Array(end);
  for (const [s, e] of opts.masked ?? []) maskedAt.fill(1, Math.max(0, s), Math.min(end, e));
  const rows: HexRow[] = [];
  for (let off = 0; off < end; off += HEX_ROW_BYTES) {
    let hex = "";
    let ascii = "";
    let masked = false;
    for (let k = 0; k < HEX_ROW_BYTES; k++) {
      const i = off + k;
      if (k > 0) hex += k === 8 ? "  " : " ";
      if (i >= end) hex += "  ";
      else if (maskedAt[i]) {
        masked = true;
        hex += MASKED_HEX;
        ascii += MASKED_ASCII;
      } else {
        const b = bytes[i];
        hex += HEX[b];
        ascii += b >= 0x20 && b < 0x7f ? PRINTABLE[b] : ".";
      }
    }
    rows.push({ offset: off.toString(16).padStart(8, "0"), hex, ascii, masked });
  }
  return rows;
}

/** One row as a line of text, as `hexdump -C` prints it. */
export function hexLine(r: HexRow): string {
  return `${r.offset}  ${r.hex}  |${r.ascii}|`;
}

/** The whole dump as text. */
export function hexDumpText(bytes: Uint8Array, opts: Parameters<typeof hexRows>[1] = {}): string {
  return hexRows(bytes, opts).map(hexLine).join("\n");
}
