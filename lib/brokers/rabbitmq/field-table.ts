/**
 * Exact decoding of AMQP 0-9-1 field tables (RabbitMQ's type set). amqplib decodes longstr values
 * as UTF-8 (replacing invalid bytes) and 64-bit integers as JS numbers (losing precision); this
 * decoder keeps both exact, so headers are shown and fingerprinted as the broker holds them.
 */
import type { DisplayValue, HeaderEntry } from "@/lib/brokers/contract/letter";
import { bytesValue, timestampValue, toDisplayValue, utf8OrNull } from "@/lib/brokers/display";

class Reader {
  constructor(
    private readonly buf: Buffer,
    public pos = 0,
    private readonly end = buf.length,
  ) {}
  need(n: number) {
    if (this.pos + n > this.end) throw new RangeError("field table truncated");
  }
  u8() {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }
  take(n: number) {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

function decodeValue(r: Reader, depth: number): DisplayValue {
  if (depth > 64) throw new RangeError("field table nested too deeply");
  const tag = String.fromCharCode(r.u8());
  switch (tag) {
    case "t":
      return { t: "boolean", v: r.u8() !== 0 };
    case "b":
      return { t: "number", v: String(r.take(1).readInt8(0)) };
    case "B":
      return { t: "number", v: String(r.take(1).readUInt8(0)) };
    case "s":
      return { t: "number", v: String(r.take(2).readInt16BE(0)) };
    case "u":
      return { t: "number", v: String(r.take(2).readUInt16BE(0)) };
    case "I":
      return { t: "number", v: String(r.take(4).readInt32BE(0)) };
    case "i":
      return { t: "number", v: String(r.take(4).readUInt32BE(0)) };
    case "l":
      return { t: "number", v: r.take(8).readBigInt64BE(0).toString() };
    case "f":
      return { t: "number", v: String(r.take(4).readFloatBE(0)) };
    case "d":
      return { t: "number", v: String(r.take(8).readDoubleBE(0)) };
    case "D": {
      const places = r.u8();
      const digits = r.take(4).readInt32BE(0);
      return { t: "number", v: decimalText(BigInt(digits), places) };
    }
    case "T": {
      // AMQP timestamps are seconds since the epoch.
      const secs = r.take(8).readBigUInt64BE(0);
      return timestampValue(secs * 1000n);
    }
    case "S":
    case "x": {
      const len = r.take(4).readUInt32BE(0);
      const bytes = r.take(len);
      if (tag === "x") return bytesValue(bytes);
      // Most long strings are text: decoded once, without the base64 form bytesValue would add.
      const text = utf8OrNull(bytes);
      return text !== null ? { t: "string", v: text } : bytesValue(bytes);
    }
    case "F": {
      const len = r.take(4).readUInt32BE(0);
      return { t: "table", v: decodeEntries(r, r.pos + len, depth + 1).map((e) => [e.name, e.value]) };
    }
    case "A": {
      const len = r.take(4).readUInt32BE(0);
      const end = r.pos + len;
      const items: DisplayValue[] = [];
      while (r.pos < end) items.push(decodeValue(r, depth + 1));
      return { t: "array", v: items };
    }
    case "V":
      return { t: "null" };
    default:
      throw new RangeError(`unknown field type ${JSON.stringify(tag)}`);
  }
}

function decimalText(digits: bigint, places: number): string {
  if (places === 0) return digits.toString();
  const neg = digits < 0n;
  const s = (neg ? -digits : digits).toString().padStart(places + 1, "0");
  return `${neg ? "-" : ""}${s.slice(0, -places)}.${s.slice(-places)}`;
}

function decodeEntries(r: Reader, end: number, depth: number): HeaderEntry[] {
  const out: HeaderEntry[] = [];
  while (r.pos < end) {
    const nameLen = r.u8();
    const name = r.take(nameLen).toString("utf8");
    out.push({ name, value: decodeValue(r, depth) });
  }
  if (r.pos !== end) throw new RangeError("field table length mismatch");
  return out;
}

/** Decodes the bytes of a field table (without its 4-byte length prefix). */
export function decodeFieldTable(bytes: Buffer): HeaderEntry[] {
  return decodeEntries(new Reader(bytes), bytes.length, 0);
}

/**
 * The header table inside a raw basic.properties payload (flags + property list), or null when the
 * headers flag is not set.
 */
export function headersTableFromProperties(props: Buffer): Buffer | null {
  const flags = props.readUInt16BE(0);
  let pos = 2;
  if (flags & 0x8000) pos += 1 + props.readUInt8(pos); // content-type
  if (flags & 0x4000) pos += 1 + props.readUInt8(pos); // content-encoding
  if (!(flags & 0x2000)) return null;
  const len = props.readUInt32BE(pos);
  return props.subarray(pos + 4, pos + 4 + len);
}

/**
 * Fallback when the raw table is not available: converts amqplib's decoded values, including its
 * `{ "!": "timestamp" | "decimal", value }` wrappers.
 */
export function fromAmqplibValue(value: unknown, depth = 0): DisplayValue {
  if (value && typeof value === "object" && !Array.isArray(value) && !(value instanceof Uint8Array) && "!" in value) {
    const w = value as { "!": string; value: unknown };
    if (w["!"] === "timestamp" && typeof w.value === "number") return timestampValue(w.value * 1000);
    if (w["!"] === "decimal" && w.value && typeof w.value === "object") {
      const d = w.value as { places: number; digits: number };
      return { t: "number", v: decimalText(BigInt(d.digits), d.places) };
    }
  }
  if (Array.isArray(value)) return { t: "array", v: value.map((x) => fromAmqplibValue(x, depth + 1)) };
  if (value && typeof value === "object" && !(value instanceof Uint8Array) && !(value instanceof Date)) {
    return { t: "table", v: Object.entries(value).map(([k, x]) => [k, fromAmqplibValue(x, depth + 1)]) };
  }
  return toDisplayValue(value, depth);
}

export function fromAmqplibHeaders(headers: Record<string, unknown> | undefined): HeaderEntry[] {
  return Object.entries(headers ?? {}).map(([name, v]) => ({ name, value: fromAmqplibValue(v) }));
}
