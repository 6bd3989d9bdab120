/**
 * Pulsar message ids and cursor positions, as the WebSocket and admin APIs give them.
 *
 * The WebSocket API passes a message id as base64 of the `MessageIdData` protobuf (ledgerId = 1,
 * entryId = 2, partition = 3, batch_index = 4, ack_set = 5, batch_size = 6); the admin API's
 * internal stats give cursor positions as "ledger:entry" and a cursor's acknowledged ranges as
 * "[(L:E..L:E], (L:E..L:E]]" (each range open below, closed above). A position orders by
 * ledger, then entry; both are 64-bit, so they are kept as bigint.
 */

export interface Position {
  ledger: bigint;
  entry: bigint;
}

export interface MessageId extends Position {
  partition: number;
  /** Index inside a batched entry; -1 when the entry holds one message. */
  batchIndex: number;
  batchSize: number;
}

const U64 = 1n << 64n;

function readVarint(buf: Uint8Array, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < buf.length && shift < 70n; i++) {
    const b = buf[i];
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value, i + 1];
    shift += 7n;
  }
  throw new Error("truncated varint in a Pulsar message id");
}

function writeVarint(out: number[], v: bigint): void {
  let x = v < 0n ? v + U64 : v;
  do {
    const b = Number(x & 0x7fn);
    x >>= 7n;
    out.push(x > 0n ? b | 0x80 : b);
  } while (x > 0n);
}

/** uint64 fields carry -1 (an empty ledger's "ledger:-1") as 2^64 - 1; int32 fields as 10-byte varints too. */
const signed64 = (v: bigint) => (v >= 1n << 63n ? v - U64 : v);
const signed32 = (v: bigint) => Number(BigInt.asIntN(32, v));

/** Decodes a WebSocket message id; throws on bytes that are not a MessageIdData. */
export function decodeMessageId(base64: string): MessageId {
  const buf = Buffer.from(base64, "base64");
  const id: MessageId = { ledger: -1n, entry: -1n, partition: -1, batchIndex: -1, batchSize: 0 };
  let at = 0;
  let fields = 0;
  while (at < buf.length) {
    const [tag, next] = readVarint(buf, at);
    at = next;
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (wire === 0) {
      const [v, after] = readVarint(buf, at);
      at = after;
      if (field === 1) id.ledger = signed64(v);
      else if (field === 2) id.entry = signed64(v);
      else if (field === 3) id.partition = signed32(v);
      else if (field === 4) id.batchIndex = signed32(v);
      else if (field === 6) id.batchSize = signed32(v);
      fields |= 1 << Math.min(field, 30);
    } else if (wire === 2) {
      const [len, after] = readVarint(buf, at);
      at = after + Number(len);
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else throw new Error(`unexpected wire type ${wire} in a Pulsar message id`);
  }
  if (!(fields & 2) || !(fields & 4)) throw new Error("a Pulsar message id without ledger and entry");
  return id;
}

/** The WebSocket form of a position (a reader started there reads from the entry after it). */
export function encodeMessageId(p: Position & { partition?: number; batchIndex?: number }): string {
  const out: number[] = [];
  out.push(0x08);
  writeVarint(out, p.ledger);
  out.push(0x10);
  writeVarint(out, p.entry);
  if (p.partition !== undefined && p.partition >= 0) {
    out.push(0x18);
    writeVarint(out, BigInt(p.partition));
  }
  if (p.batchIndex !== undefined && p.batchIndex >= 0) {
    out.push(0x20);
    writeVarint(out, BigInt(p.batchIndex));
  }
  return Buffer.from(out).toString("base64");
}

export function comparePositions(a: Position, b: Position): number {
  if (a.ledger !== b.ledger) return a.ledger < b.ledger ? -1 : 1;
  if (a.entry !== b.entry) return a.entry < b.entry ? -1 : 1;
  return 0;
}

/** "12:5" → position; null for anything else. */
export function parsePosition(text: string | null | undefined): Position | null {
  const m = /^(-?\d+):(-?\d+)$/.exec((text ?? "").trim());
  return m ? { ledger: BigInt(m[1]), entry: BigInt(m[2]) } : null;
}

/** A cursor's acknowledged ranges: entries in (from, to] are acknowledged. */
export interface AckedRange {
  from: Position;
  to: Position;
}

/** Parses internal stats' `individuallyDeletedMessages`, "[(12:0..12:2], (14:3..14:9]]". */
export function parseAckedRanges(text: string | null | undefined): AckedRange[] {
  const out: AckedRange[] = [];
  for (const m of (text ?? "").matchAll(/\((-?\d+):(-?\d+)\.\.(-?\d+):(-?\d+)\]/g)) {
    out.push({
      from: { ledger: BigInt(m[1]), entry: BigInt(m[2]) },
      to: { ledger: BigInt(m[3]), entry: BigInt(m[4]) },
    });
  }
  return out;
}

/**
 * What a subscription has acknowledged: everything up to its mark-delete position, and the ranges
 * above it. `isAcked` is a binary search, so checking every letter of a long read stays cheap.
 */
export class AckState {
  private readonly ranges: AckedRange[];
  constructor(
    readonly markDelete: Position,
    ranges: AckedRange[],
  ) {
    this.ranges = [...ranges].sort((a, b) => comparePositions(a.from, b.from));
  }

  isAcked(p: Position): boolean {
    if (comparePositions(p, this.markDelete) <= 0) return true;
    let lo = 0;
    let hi = this.ranges.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.ranges[mid];
      if (comparePositions(p, r.from) <= 0) hi = mid - 1;
      else if (comparePositions(p, r.to) > 0) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/** A letter's id in the console: "<ledger>-<entry>", plus "-<batch index>" inside a batched entry. URL-safe and stable. */
export function letterIdOf(id: MessageId): string {
  return id.batchIndex >= 0 && id.batchSize > 0
    ? `${id.ledger}-${id.entry}-${id.batchIndex}`
    : `${id.ledger}-${id.entry}`;
}

/** The position a letter id names, or null when it is not one of ours. */
export function positionOfLetterId(letterId: string): (Position & { batchIndex: number }) | null {
  const m = /^(\d+)-(\d+)(?:-(\d+))?$/.exec(letterId);
  if (!m) return null;
  return { ledger: BigInt(m[1]), entry: BigInt(m[2]), batchIndex: m[3] === undefined ? -1 : Number(m[3]) };
}

/** Pulsar's own text form of a message id ("ledger:entry:partition[:batch]"), as its tools print it. */
export function messageIdText(id: MessageId): string {
  const base = `${id.ledger}:${id.entry}:${id.partition}`;
  return id.batchIndex >= 0 && id.batchSize > 0 ? `${base}:${id.batchIndex}` : base;
}
