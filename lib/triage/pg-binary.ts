/**
 * One-dimensional Postgres arrays in the binary wire format (array_recv), for bulk parameters that
 * node-postgres sends as they are (a Buffer parameter goes in binary format). Against the text
 * format (`{"…","…"}`), neither side escapes or scans element text: node-postgres's arrayString
 * ran two regex replaces over every element, and array_in reads every character. Pure.
 *
 * Layout: ndim, has-null flag, element type oid, length, lower bound (1); then per element its
 * byte length (-1 for NULL) and its bytes (text: UTF-8; int4: big-endian; bool: one byte; bytea: raw).
 */

export type BinaryElement = "text" | "int4" | "bool" | "bytea";

const OID: Record<BinaryElement, number> = { text: 25, int4: 23, bool: 16, bytea: 17 };
const HEADER = 20;

export function binaryArray(type: "text", values: ReadonlyArray<string | null>): Buffer;
export function binaryArray(type: "int4", values: ReadonlyArray<number | null>): Buffer;
export function binaryArray(type: "bool", values: ReadonlyArray<boolean | null>): Buffer;
export function binaryArray(type: "bytea", values: ReadonlyArray<Uint8Array | null>): Buffer;
export function binaryArray(
  type: BinaryElement,
  values: ReadonlyArray<string | number | boolean | Uint8Array | null>,
): Buffer {
  return type === "text" ? textArray(values as ReadonlyArray<string | null>) : fixedArray(type, values);
}

function header(buf: Buffer, type: BinaryElement, n: number, hasNull: boolean) {
  buf.writeInt32BE(1, 0);
  buf.writeInt32BE(hasNull ? 1 : 0, 4);
  buf.writeUInt32BE(OID[type], 8);
  buf.writeInt32BE(n, 12);
  buf.writeInt32BE(1, 16);
}

/**
 * Text elements are written once into a scratch buffer sized by the UTF-8 upper bound (3 bytes per
 * UTF-16 unit), each length patched in after its bytes, then copied out: half the cost of measuring
 * every string's byte length first. Large batches get a buffer of their own instead of a huge scratch.
 */
const SCRATCH_MAX = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(64 * 1024);

/** The header, 4 bytes per element and `bytesOf` each non-null element; and whether any is null. */
function measure<T>(values: ReadonlyArray<T | null>, bytesOf: (v: T) => number): { size: number; hasNull: boolean } {
  let size = HEADER + 4 * values.length;
  let hasNull = false;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) hasNull = true;
    else size += bytesOf(v);
  }
  return { size, hasNull };
}

function textArray(values: ReadonlyArray<string | null>): Buffer {
  const n = values.length;
  const { size: bound, hasNull } = measure(values, (v) => 3 * v.length);
  let buf = scratch;
  if (bound > buf.length) {
    buf = Buffer.allocUnsafe(bound);
    if (bound <= SCRATCH_MAX) scratch = buf;
  }
  header(buf, "text", n, hasNull);
  let at = HEADER;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      buf.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    const len = buf.write(v, at + 4, "utf8");
    buf.writeInt32BE(len, at);
    at += 4 + len;
  }
  return Buffer.from(buf.subarray(0, at)); // a copy: the scratch is reused by the next call
}

function fixedArray(
  type: Exclude<BinaryElement, "text">,
  values: ReadonlyArray<string | number | boolean | Uint8Array | null>,
): Buffer {
  const n = values.length;
  const { size, hasNull } = measure(values, (v) =>
    type === "int4" ? 4 : type === "bool" ? 1 : (v as Uint8Array).byteLength,
  );
  const buf = Buffer.allocUnsafe(size);
  header(buf, type, n, hasNull);
  let at = HEADER;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      buf.writeInt32BE(-1, at);
      at += 4;
    } else if (type === "int4") {
      if (!Number.isInteger(v) || (v as number) < -2147483648 || (v as number) > 2147483647)
        throw new RangeError(`not an int4: ${String(v)}`);
      buf.writeInt32BE(4, at);
      buf.writeInt32BE(v as number, at + 4);
      at += 8;
    } else if (type === "bool") {
      buf.writeInt32BE(1, at);
      buf[at + 4] = v ? 1 : 0;
      at += 5;
    } else {
      const b = v as Uint8Array;
      buf.writeInt32BE(b.byteLength, at);
      buf.set(b, at + 4);
      at += 4 + b.byteLength;
    }
  }
  return buf;
}
