import { describe, expect, it } from "vitest";
import { BinaryArrayWriter, binaryArray } from "@/lib/pg-binary";

/** Reads back what array_recv would: header, then (length, bytes) per element. */
function parse(buf: Buffer) {
  const [ndim, hasNull, oid, n, lower] = [0, 4, 8, 12, 16].map((o) => buf.readInt32BE(o));
  const items: Array<Buffer | null> = [];
  let at = 20;
  for (let i = 0; i < n; i++) {
    const len = buf.readInt32BE(at);
    at += 4;
    if (len < 0) items.push(null);
    else {
      items.push(buf.subarray(at, at + len));
      at += len;
    }
  }
  expect(at).toBe(buf.length);
  return { ndim, hasNull, oid, n, lower, items };
}

describe("binaryArray", () => {
  it("text: UTF-8 bytes with their byte lengths, NULLs flagged", () => {
    const a = parse(binaryArray("text", ["a", null, "", "é€😀", "\uD800x"]));
    expect(a).toMatchObject({ ndim: 1, hasNull: 1, oid: 25, n: 5, lower: 1 });
    expect(a.items.map((b) => b?.toString("utf8") ?? null)).toEqual(["a", null, "", "é€😀", "\uFFFDx"]);
    expect(a.items[3]!.length).toBe(2 + 3 + 4);
  });

  it("text: batches larger than the scratch buffer, and the result is not reused by the next call", () => {
    const big = Array.from({ length: 3000 }, (_, i) => `${i}-${"ü".repeat(500)}`);
    const first = binaryArray("text", big);
    binaryArray("text", ["overwrite"]);
    expect(parse(first).items.map((b) => b!.toString("utf8"))).toEqual(big);
    expect(parse(binaryArray("text", ["x"])).hasNull).toBe(0);
  });

  it("int4, bool and bytea", () => {
    expect(parse(binaryArray("int4", [0, -1, 2147483647, null])).items.map((b) => b?.readInt32BE(0) ?? null)).toEqual([
      0,
      -1,
      2147483647,
      null,
    ]);
    expect(parse(binaryArray("int4", [1])).oid).toBe(23);
    expect(() => binaryArray("int4", [2 ** 31])).toThrow(RangeError);
    expect(() => binaryArray("int4", [1.5])).toThrow(RangeError);
    expect(parse(binaryArray("bool", [true, false])).items.map((b) => b![0])).toEqual([1, 0]);
    const bytes = parse(binaryArray("bytea", [Uint8Array.of(0, 255, 1), null, new Uint8Array(0)]));
    expect(bytes).toMatchObject({ oid: 17, hasNull: 1 });
    expect(bytes.items.map((b) => (b ? [...b] : null))).toEqual([[0, 255, 1], null, []]);
  });

  it("a writer that starts small grows as elements come, and gives the same bytes as binaryArray", () => {
    const texts = Array.from({ length: 200 }, (_, i) => (i % 7 === 0 ? null : `${i}-${"é€😀x".repeat(i % 13)}`));
    const w = new BinaryArrayWriter("text", 16);
    for (const t of texts) w.text(t);
    expect(w.length).toBe(200);
    const out = w.finish();
    expect(out.length).toBe(w.byteLength);
    expect(out.equals(binaryArray("text", texts))).toBe(true);
    expect(parse(out).items.map((b) => b?.toString("utf8") ?? null)).toEqual(texts);
    expect(() => w.text("more")).toThrow(/finished/);
    expect(() => w.finish()).toThrow(/finished/);
    const ints = new BinaryArrayWriter("int4", 1);
    for (let i = 0; i < 100; i++) ints.int4(i === 50 ? null : i * 1000);
    expect(parse(ints.finish()).items.map((b) => b?.readInt32BE(0) ?? null)).toEqual(
      Array.from({ length: 100 }, (_, i) => (i === 50 ? null : i * 1000)),
    );
    const bytes = new BinaryArrayWriter("bytea", 1);
    bytes.bytea(Buffer.alloc(300, 9));
    bytes.bytea(null);
    expect(parse(bytes.finish()).items.map((b) => b?.length ?? null)).toEqual([300, null]);
  });
});
