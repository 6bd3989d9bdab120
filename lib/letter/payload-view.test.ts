import { describe, expect, it } from "vitest";
import { buildPayloadView, hexDump, reindentJson } from "./payload-view";
import { decodeUtf8, looksLikeText } from "@/lib/text";

const enc = (s: string) => new TextEncoder().encode(s);

describe("buildPayloadView", () => {
  it("pretty-prints JSON and keeps number tokens exactly", () => {
    const v = buildPayloadView(enc('{"id":12345678901234567890,"a":[1,2,{}],"s":"x,\\"y:]"}'));
    expect(v.kind).toBe("json");
    expect(v.text).toBe(
      '{\n  "id": 12345678901234567890,\n  "a": [\n    1,\n    2,\n    {}\n  ],\n  "s": "x,\\"y:]"\n}',
    );
  });
  it("shows plain text as text", () => {
    const v = buildPayloadView(enc("order 42 failed\nretry later"));
    expect(v).toEqual({ kind: "text", text: "order 42 failed\nretry later", note: null });
  });
  it("treats invalid JSON that looks like JSON as text", () => {
    expect(buildPayloadView(enc("{ not json")).kind).toBe("text");
  });
  it("falls back to raw text for deeply nested JSON without throwing", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const v = buildPayloadView(enc(deep));
    expect(v.kind).toBe("text");
    expect(v.note).toMatch(/deeper than 64/);
  });
  it("bounds the size of the pretty-printed view", () => {
    const big = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ i })));
    const v = buildPayloadView(enc(big), { maxChars: 1000 });
    expect(v.kind).toBe("json");
    expect(v.text.length).toBeLessThanOrEqual(1000);
    expect(v.note).toMatch(/cut short/);
  });
  it("shows binary and invalid UTF-8 as hex", () => {
    const v = buildPayloadView(new Uint8Array([0xff, 0xfe, 0x00, 0x41]));
    expect(v.kind).toBe("hex");
    expect(v.text).toContain("ff fe 00 41");
    const nul = buildPayloadView(enc("a\u0000b"));
    expect(nul.kind).toBe("hex");
  });
  it("does not pretty-print a truncated prefix, and tolerates a cut multibyte character", () => {
    const bytes = enc('{"name":"Zoë"}').subarray(0, 12); // cuts inside ë
    const v = buildPayloadView(bytes, { truncated: true });
    expect(v.kind).toBe("text");
    expect(v.note).toMatch(/first part/);
  });
  it("limits the hex dump", () => {
    const v = buildPayloadView(new Uint8Array(1000).fill(0x01), { maxHexBytes: 32 });
    expect(v.kind).toBe("hex");
    expect(v.text.split("\n")).toHaveLength(2);
    // The panel says "showing the first 32 of 1,000 bytes"; the view carries exactly those bytes.
    if (v.kind !== "hex") throw new Error("hex expected");
    expect(Buffer.from(v.base64, "base64")).toEqual(Buffer.alloc(32, 1));
    expect(v.maskedRanges).toEqual([]);
  });
});

describe("hexDump", () => {
  it("prints offset, hex and ascii columns", () => {
    const lines = hexDump(enc("Hello, world! <script>")).split("\n");
    expect(lines[0]).toBe("00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 20 3c 73  |Hello, world! <s|");
    expect(lines[1].startsWith("00000010  63 72 69 70 74 3e")).toBe(true);
    expect(lines[1].endsWith("|cript>|")).toBe(true);
  });
  it("is empty for no bytes", () => {
    expect(hexDump(new Uint8Array())).toBe("");
  });
});

describe("helpers", () => {
  it("decodes strict UTF-8", () => {
    expect(decodeUtf8(enc("ok"))).toBe("ok");
    expect(decodeUtf8(new Uint8Array([0xc3]))).toBeNull();
    expect(decodeUtf8(new Uint8Array([0xc3]), true)).toBe("");
  });
  it("recognises text", () => {
    expect(looksLikeText("line\ttab\r\n")).toBe(true);
    expect(looksLikeText("\u0001\u0002ab")).toBe(false);
  });
  it("reindents empty containers inline", () => {
    expect(reindentJson('{ "a" : [ ] , "b" : { } }', 10, 1000)?.text).toBe('{\n  "a": [],\n  "b": {}\n}');
  });
});
