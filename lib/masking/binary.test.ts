import { describe, expect, it } from "vitest";
import { DEFAULT_MASKING_RULES } from "./defaults";
import { hexView } from "@/lib/letter/payload-view";
import { compressionOf, maskBinary } from "./binary";

const KEY = "k".repeat(32);
const rules = DEFAULT_MASKING_RULES;
const bin = (...parts: Array<string | number[]>) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...Buffer.from(p, "latin1")] : p)));

describe("maskBinary", () => {
  it("leaves bytes without anything to mask as they are", () => {
    const b = bin([0x08, 0x96, 0x01, 0x12, 0x07], "testing", [0xff, 0x00]);
    const m = maskBinary(b, rules, KEY);
    expect(m).toEqual({ kind: "masked", bytes: b, ranges: [], maskedCount: 0 });
  });

  it("hides a printable run that holds a card number or an e-mail, and zeroes its bytes", () => {
    const b = bin([0x0a, 0x10], "4111111111111111", [0x12, 0x11], "ada@example.com", [0x00, 0x01], "fine");
    const m = maskBinary(b, rules, KEY);
    if (m.kind !== "masked") throw new Error(m.reason);
    expect(m.maskedCount).toBe(2);
    expect(m.ranges).toEqual([
      [2, 18],
      [20, 35],
    ]);
    expect(Buffer.from(m.bytes).toString("latin1")).not.toMatch(/4111|ada@/);
    expect(Buffer.from(m.bytes.subarray(37)).toString("latin1")).toBe("fine");
  });

  it("gives the hex view no masked byte: not in its base64, not in its dump", () => {
    const b = bin([0x00, 0x01], "card 4111111111111111 ok", [0xff]);
    const m = maskBinary(b, rules, KEY);
    if (m.kind !== "masked") throw new Error(m.reason);
    const v = hexView(m.bytes, { maxHexBytes: 1024, note: null, masked: m.ranges });
    expect(v.maskedRanges).toEqual([[2, 26]]);
    expect(Buffer.from(v.base64, "base64").toString("latin1")).not.toMatch(/4111|1111/);
    expect(v.text).not.toMatch(/34 31 31 31|31 31 31 31|4111/);
  });

  it("hides the value after a key a field rule names (BSON, MessagePack keep key names)", () => {
    const b = bin([0x02], "password", [0x00, 0x0a, 0x00, 0x00, 0x00], "hunter2!!", [0x00, 0x02], "user", [0x00], "ada");
    const m = maskBinary(b, rules, KEY);
    if (m.kind !== "masked") throw new Error(m.reason);
    expect(Buffer.from(m.bytes).toString("latin1")).not.toContain("hunter2");
    expect(Buffer.from(m.bytes).toString("latin1")).toContain("password");
    expect(Buffer.from(m.bytes).toString("latin1")).toContain("ada");
    // A length byte that prints ("A" = 65) does not stand in for the value; a short key (pin) counts.
    const short = maskBinary(bin([0x02], "pin", [0x00, 0x41, 0x00], "1234", [0x00]), rules, KEY);
    if (short.kind !== "masked") throw new Error(short.reason);
    expect(Buffer.from(short.bytes).toString("latin1")).not.toContain("1234");
  });

  it("hides compressed payloads, whose content a reader could inflate from the hex", () => {
    expect(compressionOf(Uint8Array.from([0x1f, 0x8b, 0x08, 0x00]))).toBe("gzip");
    expect(compressionOf(Uint8Array.from([0x78, 0x9c, 0x01]))).toBe("zlib");
    expect(compressionOf(Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd]))).toBe("zstd");
    expect(compressionOf(bin("hello"))).toBeNull();
    expect(maskBinary(Uint8Array.from([0x1f, 0x8b, 0x08, 0x00]), rules, KEY)).toMatchObject({ kind: "hidden" });
    expect(maskBinary(bin([0xff], "abc"), rules, KEY, { contentEncoding: "br" })).toMatchObject({ kind: "hidden" });
  });

  it("stays linear on 1 MB of random-looking bytes", () => {
    const big = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24);
    const m = maskBinary(big, rules, KEY);
    expect(m.kind).toBe("masked");
  });
});
