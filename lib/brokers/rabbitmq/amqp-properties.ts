/**
 * AMQP 0-9-1 basic.properties as bytes: parse the raw properties a delivery carried (raw-headers.ts
 * captures them), walk a field table entry by entry, and rebuild the properties with the redrive
 * markers (and a repair's edits) while every other property and header entry stays byte for byte.
 * amqplib's own encoding would lose 64-bit integers, longstrs that are not valid UTF-8, type tags
 * and the order of integer-like keys, so the movers never hand headers to it (raw-publish.ts).
 */
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";

export const F_HEADERS = 0x2000;
export const F_DELIVERY_MODE = 0x1000;
export const F_USER_ID = 0x0010;
export const F_MESSAGE_ID = 0x0080;
export const F_CORRELATION_ID = 0x0400;
export const F_CONTINUATION = 0x0001;

/** Property flags in wire order, with how each is encoded. */
const PROPERTY_LAYOUT: Array<[number, "shortstr" | "table" | "octet" | "u64"]> = [
  [0x8000, "shortstr"], // content-type
  [0x4000, "shortstr"], // content-encoding
  [0x2000, "table"], // headers
  [0x1000, "octet"], // delivery-mode
  [0x0800, "octet"], // priority
  [0x0400, "shortstr"], // correlation-id
  [0x0200, "shortstr"], // reply-to
  [0x0100, "shortstr"], // expiration
  [0x0080, "shortstr"], // message-id
  [0x0040, "u64"], // timestamp
  [0x0020, "shortstr"], // type
  [0x0010, "shortstr"], // user-id
  [0x0008, "shortstr"], // app-id
  [0x0004, "shortstr"], // cluster-id
];

export interface ParsedProperties {
  flags: number;
  /** Each present property's encoded bytes (length prefix included), by flag. */
  fields: Map<number, Buffer>;
}

const truncated = () => new RangeError("basic.properties truncated");

export function parseProperties(raw: Buffer): ParsedProperties {
  const flags = scanProperties(raw);
  const fields = new Map<number, Buffer>();
  for (let i = 0; i < PROPERTY_LAYOUT.length; i++)
    if (starts[i] >= 0) fields.set(PROPERTY_LAYOUT[i][0], raw.subarray(starts[i], firstFrom(i + 1)));
  return { flags, fields };
}

/** The string value of a shortstr property as raw bytes (no length prefix), or null. */
export function shortstrOf(p: ParsedProperties, flag: number): Buffer | null {
  const b = p.fields.get(flag);
  return b ? b.subarray(1) : null;
}

/** The size of each fixed-size field value by its type tag (a char code), -1: a 4-byte length and that many bytes, undefined: unknown. */
const VALUE_SIZE: Array<number | undefined> = [];
for (const [tag, n] of Object.entries({ t: 1, b: 1, B: 1, s: 2, u: 2, I: 4, i: 4, l: 8, f: 4, d: 8, D: 5, T: 8, V: 0 }))
  VALUE_SIZE[tag.charCodeAt(0)] = n;
for (const tag of "SxFA") VALUE_SIZE[tag.charCodeAt(0)] = -1;

/** Skips one field value at `pos` (its type tag included) and returns the position after it; `limit`: the table's end. */
function skipValue(buf: Buffer, pos: number, limit = buf.length): number {
  if (pos + 1 > limit) throw new RangeError("field table truncated");
  const code = buf[pos++];
  const size = VALUE_SIZE[code];
  if (size === undefined) throw new RangeError(`unknown field type ${JSON.stringify(String.fromCharCode(code))}`);
  let end = pos + size;
  if (size === -1) {
    if (pos + 4 > limit) throw new RangeError("field table truncated");
    end = pos + 4 + buf.readUInt32BE(pos);
  }
  if (end > limit) throw new RangeError("field table truncated");
  return end;
}

/** The entries of a field table (without its length prefix): name and the exact bytes of the whole entry. */
export function tableEntries(table: Buffer): Array<{ name: string; bytes: Buffer }> {
  const out: Array<{ name: string; bytes: Buffer }> = [];
  let pos = 0;
  while (pos < table.length) {
    const start = pos;
    const nameLen = table.readUInt8(pos);
    if (pos + 1 + nameLen > table.length) throw new RangeError("field table truncated");
    const name = table.subarray(pos + 1, pos + 1 + nameLen).toString("latin1");
    pos = skipValue(table, pos + 1 + nameLen);
    out.push({ name, bytes: table.subarray(start, pos) });
  }
  return out;
}

/** A table entry's name and type tag ("S", "I") at `at`: its length byte, its latin1 bytes, the tag; returns the position after them. */
function entryHead(out: Buffer, at: number, name: string, tag: number): number {
  out[at] = name.length;
  out.write(name, at + 1, "latin1");
  out[at + 1 + name.length] = tag;
  return at + 2 + name.length;
}
const TAG_S = 0x53;
const TAG_I = 0x49;
export function longstrEntry(name: string, value: string | Buffer): Buffer {
  if (Buffer.byteLength(name, "latin1") > 255) throw new RangeError("header name longer than 255 bytes");
  const size = typeof value === "string" ? Buffer.byteLength(value, "utf8") : value.length;
  const out = Buffer.allocUnsafe(2 + name.length + 4 + size);
  let pos = entryHead(out, 0, name, TAG_S);
  pos = out.writeUInt32BE(size, pos);
  if (typeof value === "string") out.write(value, pos, "utf8");
  else value.copy(out, pos);
  return out;
}
export function int32Entry(name: string, value: number): Buffer {
  if (Buffer.byteLength(name, "latin1") > 255) throw new RangeError("header name longer than 255 bytes");
  const out = Buffer.allocUnsafe(2 + name.length + 4);
  out.writeInt32BE(value, entryHead(out, 0, name, TAG_I));
  return out;
}

/**
 * The last entry made for one marker, kept: every letter of a redrive carries the same redrive id,
 * and nearly all the same count. The entries are only ever copied from, never written to.
 */
class LastEntry<V> {
  private value: V | undefined;
  private bytes: Buffer | null = null;
  constructor(private readonly make: (v: V) => Buffer) {}
  of(v: V): Buffer {
    if (this.bytes === null || this.value !== v) {
      this.bytes = this.make(v);
      this.value = v;
    }
    return this.bytes;
  }
}
const lastRedriveId = new LastEntry((id: string) => longstrEntry(REDRIVE_HEADERS.redriveId, id));
const lastRedriveCount = new LastEntry((n: number) => int32Entry(REDRIVE_HEADERS.redriveCount, n));

export interface MarkerValues {
  redriveId: string;
  replayId: string;
  redriveCount: number;
  /** Used only when the letter does not carry x-dlq-original-message-id yet (bytes: kept as they were). */
  originalMessageId: string | Buffer | null;
}

/**
 * What a repair changes besides the markers (repair.ts says which edits are allowed). Header
 * names are keyed as `tableEntries` gives them (latin1: one char per raw byte).
 */
export interface PropertyEdits {
  /** Entry bytes that replace the entry of that name in place (or are appended), or null: the entry is dropped. */
  headers: Map<string, Buffer | null>;
  /** Shortstr properties to set (message-id, correlation-id), by property flag. */
  shortstrs: Map<number, string>;
}

/**
 * The letter's properties with the redrive markers set and delivery-mode 2; everything else byte
 * for byte. Markers already present are replaced in place (never appended twice);
 * x-dlq-original-message-id is kept when present. Header names are compared byte-exact. `edits`
 * (a repair) are applied the same way: a named entry is replaced in place or dropped, a new one
 * appended before the markers; the shortstr properties it names are set.
 */
export function rebuildProperties(
  raw: Buffer,
  m: MarkerValues,
  edits?: PropertyEdits,
  parsed: ParsedProperties = parseProperties(raw),
): Buffer {
  const p = { flags: parsed.flags, fields: new Map(parsed.fields) };
  const oldTable = p.fields.get(F_HEADERS);
  const entries = oldTable ? tableEntries(oldTable.subarray(4)) : [];
  const replace = new Map<string, Buffer | null>(edits?.headers);
  replace.set(REDRIVE_HEADERS.redriveId, lastRedriveId.of(m.redriveId));
  replace.set(REDRIVE_HEADERS.replayId, longstrEntry(REDRIVE_HEADERS.replayId, m.replayId));
  replace.set(REDRIVE_HEADERS.redriveCount, lastRedriveCount.of(m.redriveCount));
  const hasOriginal = entries.some((e) => e.name === REDRIVE_HEADERS.originalMessageId);
  if (!hasOriginal && m.originalMessageId !== null)
    replace.set(
      REDRIVE_HEADERS.originalMessageId,
      longstrEntry(REDRIVE_HEADERS.originalMessageId, m.originalMessageId),
    );
  const parts: Buffer[] = [];
  const done = new Set<string>();
  for (const e of entries) {
    if (!replace.has(e.name)) {
      parts.push(e.bytes);
      continue;
    }
    // A duplicate entry of a replaced name (only possible in a hand-made table) is dropped: one value each.
    const r = replace.get(e.name);
    if (r && !done.has(e.name)) parts.push(r);
    done.add(e.name);
  }
  for (const [name, r] of replace) if (r && !done.has(name)) parts.push(r);
  let size = 0;
  for (const b of parts) size += b.length;
  const table = Buffer.allocUnsafe(4 + size);
  table.writeUInt32BE(size, 0);
  let at = 4;
  for (const b of parts) at += b.copy(table, at);
  p.fields.set(F_HEADERS, table);
  p.fields.set(F_DELIVERY_MODE, PERSISTENT);
  let flags = p.flags | F_HEADERS | F_DELIVERY_MODE;
  for (const [flag, value] of edits?.shortstrs ?? []) {
    p.fields.set(flag, shortstr(value));
    flags |= flag;
  }
  return serializeProperties(flags, p.fields);
}

/** RabbitMQ refuses this letter's user-id property (userIdRefusal says why). */
export class UserIdRefused extends Error {}

/** The three markers a redrive replaces in place, by name bytes (the original message id is kept when present). */
const MARKER_NAMES = [REDRIVE_HEADERS.redriveId, REDRIVE_HEADERS.replayId, REDRIVE_HEADERS.redriveCount].map((n) =>
  Buffer.from(n, "latin1"),
);
const ORIGINAL_NAME = Buffer.from(REDRIVE_HEADERS.originalMessageId, "latin1");
const I_HEADERS = 2;
const I_DELIVERY_MODE = 3;
const I_MESSAGE_ID = 8;
const I_USER_ID = 11;
/** Where each property of the layout starts in the raw bytes (-1: absent), and where the last ends; reused, never held across calls. */
const starts = new Int32Array(PROPERTY_LAYOUT.length + 1);

/** Fills `starts` for these properties; the checks and errors of parseProperties. */
function scanProperties(raw: Buffer): number {
  if (raw.length < 2) throw truncated();
  const flags = raw.readUInt16BE(0);
  if (flags & F_CONTINUATION) throw new RangeError("basic.properties with a continuation flag");
  let pos = 2;
  for (let i = 0; i < PROPERTY_LAYOUT.length; i++) {
    const [flag, kind] = PROPERTY_LAYOUT[i];
    if (!(flags & flag)) {
      starts[i] = -1;
      continue;
    }
    starts[i] = pos;
    let len: number;
    if (kind === "shortstr") {
      if (pos + 1 > raw.length) throw truncated();
      len = 1 + raw[pos];
    } else if (kind === "table") {
      if (pos + 4 > raw.length) throw truncated();
      len = 4 + raw.readUInt32BE(pos);
    } else len = kind === "octet" ? 1 : 8;
    if (pos + len > raw.length) throw truncated();
    pos += len;
  }
  if (pos !== raw.length) throw new RangeError("basic.properties length mismatch");
  starts[PROPERTY_LAYOUT.length] = pos;
  return flags;
}

/** Where the first present property from layout index i on starts (the end of the properties if none). */
function firstFrom(i: number): number {
  for (let j = i; j < PROPERTY_LAYOUT.length; j++) if (starts[j] >= 0) return starts[j];
  return starts[PROPERTY_LAYOUT.length];
}

/** Whether the entry name at `pos` (its length byte) is `name`, compared byte by byte (names are short: no native call). */
function nameIs(table: Buffer, pos: number, name: Buffer): boolean {
  if (table[pos] !== name.length) return false;
  for (let i = 0; i < name.length; i++) if (table[pos + 1 + i] !== name[i]) return false;
  return true;
}

/** Which replaced marker (0-2) the entry at `pos` names, 3 for the original message id, -1 for none. */
function markerOf(table: Buffer, pos: number): number {
  for (let k = 0; k < MARKER_NAMES.length; k++) if (nameIs(table, pos, MARKER_NAMES[k])) return k;
  return nameIs(table, pos, ORIGINAL_NAME) ? 3 : -1;
}

/**
 * A redrive's properties (no repair): what `rebuildProperties(raw, markers)` makes, byte for byte
 * (mover.test.ts compares them), written in one pass into one buffer: the raw properties are
 * walked by offset, with no Map, entry list or Buffer view per field. The original message id
 * is the letter's own message-id bytes when it has one, else `m.originalMessageId`. Throws
 * UserIdRefused when RabbitMQ would refuse the letter's user-id for `username`, a RangeError on
 * malformed properties.
 */
export function redriveProperties(raw: Buffer, m: MarkerValues, username: string): Buffer {
  const flags = scanProperties(raw);
  const userAt = starts[I_USER_ID];
  if (userAt >= 0) {
    const refused = userIdRefusal(
      { flags, fields: new Map([[F_USER_ID, raw.subarray(userAt, userAt + 1 + raw[userAt])]]) },
      username,
    );
    if (refused) throw new UserIdRefused(refused);
  }
  const tableAt = starts[I_HEADERS];
  const tableStart = tableAt >= 0 ? tableAt + 4 : 0;
  const tableEnd = tableAt >= 0 ? tableStart + raw.readUInt32BE(tableAt) : 0;
  // Pass 1: the size of the entries kept, and which markers the table has.
  let kept = 0;
  let found = 0; // bit k: replaced marker k seen; bit 3: an original message id
  for (let pos = tableStart; pos < tableEnd; ) {
    const nameLen = raw[pos];
    if (pos + 1 + nameLen > tableEnd) throw new RangeError("field table truncated");
    const end = skipValue(raw, pos + 1 + nameLen, tableEnd);
    const k = markerOf(raw, pos);
    if (k < 0 || k === 3) kept += end - pos;
    if (k >= 0) found |= 1 << k;
    pos = end;
  }
  const redriveId = lastRedriveId.of(m.redriveId);
  const count = lastRedriveCount.of(m.redriveCount);
  const replayLen = Buffer.byteLength(m.replayId, "utf8");
  const replaySize = 2 + REDRIVE_HEADERS.replayId.length + 4 + replayLen;
  const messageAt = starts[I_MESSAGE_ID];
  const original: string | Buffer | null =
    messageAt >= 0 && raw[messageAt] > 0
      ? raw.subarray(messageAt + 1, messageAt + 1 + raw[messageAt])
      : m.originalMessageId;
  const addOriginal = !(found & 8) && original !== null;
  const originalLen = !addOriginal
    ? 0
    : typeof original === "string"
      ? Buffer.byteLength(original, "utf8")
      : original!.length;
  const tableSize =
    kept +
    redriveId.length +
    replaySize +
    count.length +
    (addOriginal ? 2 + ORIGINAL_NAME.length + 4 + originalLen : 0);
  // The properties before the headers (content type and encoding) and after delivery-mode are
  // copied as two runs; the headers and delivery-mode between them are written.
  const headEnd = firstFrom(I_HEADERS);
  const tailStart = firstFrom(I_DELIVERY_MODE + 1);
  const end = starts[PROPERTY_LAYOUT.length];
  const size = 2 + (headEnd - 2) + 4 + tableSize + 1 + (end - tailStart);
  const out = Buffer.allocUnsafe(size);
  out.writeUInt16BE(flags | F_HEADERS | F_DELIVERY_MODE, 0);
  let at = 2 + raw.copy(out, 2, 2, headEnd);
  at = out.writeUInt32BE(tableSize, at);
  // Pass 2: every entry in place (runs of kept entries copied at once), each replaced marker once
  // (a repeated one is dropped), then the missing ones.
  let done = 0;
  const marker = (k: number) => {
    if (k === 0) at += redriveId.copy(out, at);
    else if (k === 2) at += count.copy(out, at);
    else {
      at = entryHead(out, at, REDRIVE_HEADERS.replayId, TAG_S);
      at = out.writeUInt32BE(replayLen, at);
      at += out.write(m.replayId, at, "utf8");
    }
  };
  let run = tableStart;
  for (let pos = tableStart; pos < tableEnd; ) {
    const next = skipValue(raw, pos + 1 + raw[pos], tableEnd);
    const k = markerOf(raw, pos);
    if (k >= 0 && k !== 3) {
      if (run < pos) at += raw.copy(out, at, run, pos);
      run = next;
      if (!(done & (1 << k))) {
        marker(k);
        done |= 1 << k;
      }
    }
    pos = next;
  }
  if (run < tableEnd) at += raw.copy(out, at, run, tableEnd);
  for (let k = 0; k < 3; k++) if (!(done & (1 << k))) marker(k);
  if (addOriginal) {
    at = entryHead(out, at, REDRIVE_HEADERS.originalMessageId, TAG_S);
    at = out.writeUInt32BE(originalLen, at);
    at += typeof original === "string" ? out.write(original, at, "utf8") : original!.copy(out, at);
  }
  out[at++] = 2; // delivery-mode: persistent
  if (tailStart < end) raw.copy(out, at, tailStart, end);
  return out;
}

/** The properties byte for byte, with delivery-mode 2 (persistent). */
export function withPersistentDelivery(raw: Buffer): Buffer {
  const p = parseProperties(raw);
  p.fields.set(F_DELIVERY_MODE, PERSISTENT);
  return serializeProperties(p.flags | F_DELIVERY_MODE, p.fields);
}

/** delivery-mode 2 (persistent), as its property bytes (never written to). */
const PERSISTENT = Buffer.from([2]);

function serializeProperties(flags: number, fields: Map<number, Buffer>): Buffer {
  let size = 2;
  for (const [flag] of PROPERTY_LAYOUT) if (flags & flag) size += fields.get(flag)!.length;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt16BE(flags, 0);
  let at = 2;
  for (const [flag] of PROPERTY_LAYOUT) if (flags & flag) at += fields.get(flag)!.copy(out, at);
  return out;
}

/** A shortstr (length byte + UTF-8 bytes); a RangeError over 255 bytes. */
export function shortstr(s: string): Buffer {
  const b = Buffer.from(s, "utf8");
  if (b.length > 255) throw new RangeError("shortstr longer than 255 bytes");
  return Buffer.concat([Buffer.from([b.length]), b]);
}

/** RabbitMQ only accepts a user-id property equal to the publishing user: why this letter cannot be published, or null. */
export function userIdRefusal(parsed: ParsedProperties, username: string): string | null {
  const userId = shortstrOf(parsed, F_USER_ID);
  if (!userId || userId.toString("utf8") === username) return null;
  return `The letter carries user-id "${userId.toString("utf8")}", and RabbitMQ only accepts a user-id equal to the publishing user ("${username}").`;
}
