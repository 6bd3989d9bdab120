import "server-only";

/**
 * What the console's own Kafka requests share (topic-ids.ts: Metadata v10+; offset-fetch.ts:
 * OffsetFetch v8): requests kafkajs 2.2.4 does not speak, sent over a broker connection kafkajs
 * already holds (same TLS, SASL and timeouts). They are "flexible" versions: request header v2 is
 * kafkajs's header v1 plus an empty tag buffer, which each body starts with; the response header's
 * tag buffer is the first thing each decoder skips.
 */

/** The part of kafkajs's internal Broker the console's own requests need (kafkajs 2.2.4, pinned exactly). */
export interface RawRequestBroker {
  versions: Record<number, { minVersion: number; maxVersion: number }> | null;
  connectionPool: { send(protocolRequest: unknown): Promise<unknown> };
}

/** An unsigned varint (compact lengths and counts are n + 1). */
export function uvarint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/** Reads a flexible-version response: compact strings and arrays, tagged fields. */
export class WireReader {
  private at = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}
  uvarint(): number {
    let n = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.buf.readUInt8(this.at++);
      n += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) return n;
    }
    throw new Error("varint too long");
  }
  skip(n: number) {
    if (this.at + n > this.buf.length) throw new RangeError(`truncated ${this.what} response`);
    this.at += n;
  }
  int16() {
    const v = this.buf.readInt16BE(this.at);
    this.at += 2;
    return v;
  }
  int32() {
    const v = this.buf.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  int64() {
    const v = this.buf.readBigInt64BE(this.at);
    this.at += 8;
    return v;
  }
  string(): string | null {
    const n = this.uvarint();
    if (n === 0) return null;
    const s = this.buf.toString("utf8", this.at, this.at + n - 1);
    this.skip(n - 1);
    return s;
  }
  uuid(): string | null {
    const hex = this.buf.toString("hex", this.at, this.at + 16);
    this.skip(16);
    return /^0+$/.test(hex)
      ? null
      : `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  tags() {
    for (let n = this.uvarint(); n > 0; n--) {
      this.uvarint();
      this.skip(this.uvarint());
    }
  }
  array(each: () => void) {
    for (let n = this.uvarint() - 1; n > 0; n--) each();
  }
}

/** Sends a request body the caller encoded and parses the answer (the bytes after the correlation id). */
export async function sendRaw<T>(
  broker: RawRequestBroker,
  req: { apiKey: number; apiVersion: number; apiName: string; body: Buffer },
  parse: (payload: Buffer) => T,
): Promise<T> {
  const { body } = req;
  return (await broker.connectionPool.send({
    request: {
      apiKey: req.apiKey,
      apiVersion: req.apiVersion,
      apiName: req.apiName,
      // kafkajs's request writer takes an Encoder: it checks `.buf` and copies `.buffer`.
      encode: async () => ({ buf: body, buffer: body }),
    },
    response: { decode: async (payload: Buffer) => payload, parse: async (payload: Buffer) => parse(payload) },
  })) as T;
}
