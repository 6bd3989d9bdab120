import { describe, expect, it } from "vitest";
import { base64ToBytes, bytesToBase64 } from "@/lib/text";
import { hexDumpText, hexLine, hexRows, MASKED_ASCII, MASKED_HEX } from "./hex";

const enc = (s: string) => new TextEncoder().encode(s);

describe("hexRows", () => {
  it("prints offset, 16 bytes in hex with a gap after the 8th, and their ASCII, as hexdump -C does", () => {
    const rows = hexRows(enc("Hello, world! <script>"));
    expect(rows.map(hexLine)).toEqual([
      "00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 20 3c 73  |Hello, world! <s|",
      "00000010  63 72 69 70 74 3e                                 |cript>|",
    ]);
    expect(rows[1].offset).toBe("00000010");
  });

  it("shows every non-printable byte as a dot and keeps each byte's own hex", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const rows = hexRows(all);
    expect(rows).toHaveLength(16);
    expect(rows[0].ascii).toBe(".".repeat(16));
    expect(rows[2].ascii).toBe(" !\"#$%&'()*+,-./");
    expect(rows[7].ascii).toBe("pqrstuvwxyz{|}~.");
    expect(rows[15].hex).toBe("f0 f1 f2 f3 f4 f5 f6 f7  f8 f9 fa fb fc fd fe ff");
    expect(rows.map((r) => r.offset).at(-1)).toBe("000000f0");
    // Invalid UTF-8 and markup are bytes here, never text.
    expect(hexDumpText(Uint8Array.from([0xc3, 0x28, 0x3c, 0x62, 0x3e]))).toBe(
      "00000000  c3 28 3c 62 3e                                    |.(<b>|",
    );
  });

  it("never prints masked bytes: their cells read ▒▒ and ▒, which no byte prints as", () => {
    const bytes = enc("card=4111111111111111;ok");
    const rows = hexRows(bytes, { masked: [[5, 21]] });
    const dump = rows.map(hexLine).join("\n");
    expect(dump).not.toMatch(/34 31 31 31/);
    expect(dump).not.toContain("4111");
    expect(rows[0].masked).toBe(true);
    expect(rows[0].hex.split(" ").filter((c) => c === MASKED_HEX)).toHaveLength(11);
    expect(rows[0].ascii).toBe(`card=${MASKED_ASCII.repeat(11)}`);
    expect(rows[1].ascii).toBe(`${MASKED_ASCII.repeat(5)};ok`);
    // Ranges past the end, empty or reversed change nothing.
    expect(
      hexRows(enc("abc"), {
        masked: [
          [5, 9],
          [2, 2],
          [3, 1],
        ],
      })[0].masked,
    ).toBe(false);
  });

  it("stops at maxBytes: a 1 MB payload gives the rows of its first 64 KiB", () => {
    const big = new Uint8Array(1024 * 1024).fill(0x41);
    const rows = hexRows(big, { maxBytes: 64 * 1024 });
    expect(rows).toHaveLength(4096);
    expect(rows.at(-1)!.offset).toBe("0000fff0");
  });

  it("is empty for no bytes", () => {
    expect(hexRows(new Uint8Array())).toEqual([]);
    expect(hexDumpText(new Uint8Array())).toBe("");
  });
});

describe("base64 of bytes", () => {
  it("round-trips every byte value and a 1 MB payload (no call-stack overflow)", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(bytesToBase64(all)).toBe(Buffer.from(all).toString("base64"));
    const big = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 31) & 0xff);
    const b64 = bytesToBase64(big);
    expect(b64).toBe(Buffer.from(big).toString("base64"));
    expect(Buffer.from(base64ToBytes(b64)!).equals(Buffer.from(big))).toBe(true);
    expect(base64ToBytes("not base64!")).toBeNull();
  });
});
