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
 * Appends the elements of one array as they come (a scan adds each letter's value to every
 * column's writer as the letter is indexed), then `finish()` writes the header in front and hands
 * the bytes over without copying them. Text is written straight into the buffer: when its UTF-8
 * upper bound (3 bytes per UTF-16 unit) does not fit, its exact byte length decides whether the
 * buffer grows (doubling), so a buffer sized to the batch's real bytes is not grown for nothing.
 */
export class BinaryArrayWriter {
  private buf: Buffer;
  private at = HEADER;
  private n = 0;
  private hasNull = false;
  private done = false;

  constructor(
    readonly type: BinaryElement,
    /** Initial size in bytes (the header included); it grows as needed. */
    capacity = 4096,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(HEADER + 64, Math.ceil(capacity)));
  }

  /** Elements written so far. */
  get length(): number {
    return this.n;
  }

  /** Bytes written so far, the header included: what finish() returns. */
  get byteLength(): number {
    return this.at;
  }

  private room(bytes: number): void {
    if (this.done) throw new Error("this array was finished already");
    if (this.at + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  private null(): void {
    this.room(4);
    this.buf.writeInt32BE(-1, this.at);
    this.at += 4;
    this.hasNull = true;
    this.n++;
  }

  text(v: string | null | undefined): void {
    if (v === null || v === undefined) {
      this.null();
      return;
    }
    if (this.done || this.at + 4 + 3 * v.length > this.buf.length) this.room(4 + Buffer.byteLength(v, "utf8"));
    const len = this.buf.write(v, this.at + 4, "utf8");
    this.buf.writeInt32BE(len, this.at);
    this.at += 4 + len;
    this.n++;
  }

  int4(v: number | null | undefined): void {
    if (v === null || v === undefined) {
      this.null();
      return;
    }
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new RangeError(`not an int4: ${String(v)}`);
    this.room(8);
    this.buf.writeInt32BE(4, this.at);
    this.buf.writeInt32BE(v, this.at + 4);
    this.at += 8;
    this.n++;
  }

  bool(v: boolean | null | undefined): void {
    if (v === null || v === undefined) {
      this.null();
      return;
    }
    this.room(5);
    this.buf.writeInt32BE(1, this.at);
    this.buf[this.at + 4] = v ? 1 : 0;
    this.at += 5;
    this.n++;
  }

  bytea(v: Uint8Array | null | undefined): void {
    if (v === null || v === undefined) {
      this.null();
      return;
    }
    this.room(4 + v.byteLength);
    this.buf.writeInt32BE(v.byteLength, this.at);
    this.buf.set(v, this.at + 4);
    this.at += 4 + v.byteLength;
    this.n++;
  }

  /** The array in array_recv's format. The writer takes no more elements after this. */
  finish(): Buffer {
    if (this.done) throw new Error("this array was finished already");
    this.done = true;
    header(this.buf, this.type, this.n, this.hasNull);
    return this.buf.subarray(0, this.at);
  }
}

/** Sized for ASCII text (one byte per character) and the fixed types; grows for the rest. */
function capacityOf(type: BinaryElement, values: ReadonlyArray<string | number | boolean | Uint8Array | null>): number {
  let size = HEADER + 4 * values.length;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    size +=
      type === "text" ? (v as string).length : type === "int4" ? 4 : type === "bool" ? 1 : (v as Uint8Array).byteLength;
  }
  return size;
}

function textArray(values: ReadonlyArray<string | null>): Buffer {
  const w = new BinaryArrayWriter("text", capacityOf("text", values));
  for (let i = 0; i < values.length; i++) w.text(values[i]);
  return w.finish();
}

function fixedArray(
  type: Exclude<BinaryElement, "text">,
  values: ReadonlyArray<string | number | boolean | Uint8Array | null>,
): Buffer {
  const w = new BinaryArrayWriter(type, capacityOf(type, values));
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (type === "int4") w.int4(v as number | null);
    else if (type === "bool") w.bool(v as boolean | null);
    else w.bytea(v as Uint8Array | null);
  }
  return w.finish();
}
