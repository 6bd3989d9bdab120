/**
 * Moves letters out of a RabbitMQ DLQ, conservation first (DESIGN.md, "The life of a dead letter").
 *
 * One pass from the head of the DLQ on ONE confirm channel: letters are read with the windowed
 * consume-without-ack reader (reader.ts), so every letter that is not moved stays unacked and goes
 * back, in order, when the channel closes. For each requested letter: the checksum of its bytes is
 * verified, its target resolved, and it is republished with `mandatory` and `persistent` through
 * publisher confirms; only when the broker has confirmed it (and not returned it) is its delivery
 * acked. A nack or a basic.return leaves it in the DLQ and yields "failed" with the reason.
 *
 * Byte-exact republishing: amqplib re-encodes headers from its own decoding, which loses 64-bit
 * integers, longstrs that are not valid UTF-8, value type tags (a 'b' byte becomes whatever amqplib
 * guesses) and the order of integer-like keys. So the mover does not hand headers to amqplib: it
 * takes the raw basic.properties bytes the read side captured (raw-headers.ts), copies every property
 * and every header entry byte for byte, replaces only the redrive markers, sets delivery-mode 2, and
 * writes the publish frames itself on the channel (amqplib still numbers the publish and tracks
 * its confirm). Without raw bytes a letter is not moved ("failed"): nothing is re-serialised.
 *
 * Repair and resubmit (issue 18, `MoveRequest.repair`): the same byte-exact copy with the
 * operator's edits (repair.ts says which): a new body where given, named headers replaced in place
 * as longstr or dropped, a new message-id (the replay id: it is a new message), correlation-id only
 * where the operator gave one, and x-dlq-repaired-by-operation beside the redrive markers. After the
 * broker confirmed the copy, the original's complete copy goes to `opts.beforeRemove` (the archive),
 * one letter at a time in DLQ order, and the original is acked only once that resolved; if it
 * throws, the original stays (the copy is then a tagged duplicate, never a loss).
 *
 * Crash window (exactly-once is impossible): a letter is acked only after its copy is confirmed,
 * never the reverse. If the process dies after a confirm and before the ack reaches the broker,
 * the letter is both in the target and back in the DLQ: a duplicate, never a loss, and the copy
 * carries x-dlq-replay-id so consumers and the console can recognise it. At most `maxInFlight`
 * letters are in that window at once.
 */
import type { Channel, ConfirmChannel, ConsumeMessage } from "amqplib";
import {
  BrokerError,
  REDRIVE_HEADERS,
  REPAIR_HEADER,
  type LetterCopy,
  type LetterRepair,
  type DlqSummary,
  type MoveOptions,
  type ReadRisk,
  type MoveRequest,
  type MoveResult,
  type RemoveOptions,
  type RemoveRequest,
  type RemoveResult,
} from "@/lib/brokers/types";
import { findHeader, displayText } from "@/lib/brokers/display";
import { b64, beforeRemoveFailure, encodeEnvelope } from "@/lib/brokers/envelope";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { QueueReader } from "@/lib/brokers/rabbitmq/reader";
import { OccurrenceCounter } from "@/lib/brokers/rabbitmq/identity";
import { decodeHeaders, letterIdOf, toLetter } from "@/lib/brokers/rabbitmq/letter";
import { parseXDeath } from "@/lib/brokers/rabbitmq/failure";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { archiveFailure, headerEdits, nameKey, repairRefusal } from "@/lib/brokers/rabbitmq/repair";

// ---------------------------------------------------------------------------------------------
// basic.properties: parse the raw bytes, replace the markers, rebuild.

const F_HEADERS = 0x2000;
const F_DELIVERY_MODE = 0x1000;
const F_USER_ID = 0x0010;
const F_MESSAGE_ID = 0x0080;
const F_CORRELATION_ID = 0x0400;
const F_CONTINUATION = 0x0001;

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

export function parseProperties(raw: Buffer): ParsedProperties {
  if (raw.length < 2) throw new RangeError("basic.properties truncated");
  const flags = raw.readUInt16BE(0);
  if (flags & F_CONTINUATION) throw new RangeError("basic.properties with a continuation flag");
  let pos = 2;
  const fields = new Map<number, Buffer>();
  const need = (n: number) => {
    if (pos + n > raw.length) throw new RangeError("basic.properties truncated");
  };
  for (const [flag, kind] of PROPERTY_LAYOUT) {
    if (!(flags & flag)) continue;
    let len: number;
    if (kind === "shortstr") {
      need(1);
      len = 1 + raw.readUInt8(pos);
    } else if (kind === "table") {
      need(4);
      len = 4 + raw.readUInt32BE(pos);
    } else len = kind === "octet" ? 1 : 8;
    need(len);
    fields.set(flag, raw.subarray(pos, pos + len));
    pos += len;
  }
  if (pos !== raw.length) throw new RangeError("basic.properties length mismatch");
  return { flags, fields };
}

/** The string value of a shortstr property as raw bytes (no length prefix), or null. */
export function shortstrOf(p: ParsedProperties, flag: number): Buffer | null {
  const b = p.fields.get(flag);
  return b ? b.subarray(1) : null;
}

/** Skips one field value at `pos` (its type tag included) and returns the position after it. */
function skipValue(buf: Buffer, pos: number): number {
  const need = (n: number) => {
    if (pos + n > buf.length) throw new RangeError("field table truncated");
  };
  need(1);
  const tag = String.fromCharCode(buf[pos++]);
  const fixed: Record<string, number> = {
    t: 1,
    b: 1,
    B: 1,
    s: 2,
    u: 2,
    I: 4,
    i: 4,
    l: 8,
    f: 4,
    d: 8,
    D: 5,
    T: 8,
    V: 0,
  };
  if (tag in fixed) {
    need(fixed[tag]);
    return pos + fixed[tag];
  }
  if (tag === "S" || tag === "x" || tag === "F" || tag === "A") {
    need(4);
    const len = buf.readUInt32BE(pos);
    need(4 + len);
    return pos + 4 + len;
  }
  throw new RangeError(`unknown field type ${JSON.stringify(tag)}`);
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

function entry(name: string, tag: string, payload: Buffer): Buffer {
  const n = Buffer.from(name, "latin1");
  return Buffer.concat([Buffer.from([n.length]), n, Buffer.from(tag, "latin1"), payload]);
}
export function longstrEntry(name: string, value: string | Buffer): Buffer {
  const v = typeof value === "string" ? Buffer.from(value, "utf8") : value;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(v.length);
  return entry(name, "S", Buffer.concat([len, v]));
}
export function int32Entry(name: string, value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(value);
  return entry(name, "I", b);
}

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
export function rebuildProperties(raw: Buffer, m: MarkerValues, edits?: PropertyEdits): Buffer {
  const p = parseProperties(raw);
  const oldTable = p.fields.get(F_HEADERS);
  const entries = oldTable ? tableEntries(oldTable.subarray(4)) : [];
  const replace = new Map<string, Buffer | null>(edits?.headers);
  replace.set(REDRIVE_HEADERS.redriveId, longstrEntry(REDRIVE_HEADERS.redriveId, m.redriveId));
  replace.set(REDRIVE_HEADERS.replayId, longstrEntry(REDRIVE_HEADERS.replayId, m.replayId));
  replace.set(REDRIVE_HEADERS.redriveCount, int32Entry(REDRIVE_HEADERS.redriveCount, m.redriveCount));
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
  const body = Buffer.concat(parts);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  p.fields.set(F_HEADERS, Buffer.concat([len, body]));
  p.fields.set(F_DELIVERY_MODE, Buffer.from([2]));
  let flags = p.flags | F_HEADERS | F_DELIVERY_MODE;
  for (const [flag, value] of edits?.shortstrs ?? []) {
    p.fields.set(flag, shortstr(value));
    flags |= flag;
  }
  return serializeProperties(flags, p.fields);
}

/** The properties byte for byte, with delivery-mode 2 (persistent). */
export function withPersistentDelivery(raw: Buffer): Buffer {
  const p = parseProperties(raw);
  p.fields.set(F_DELIVERY_MODE, Buffer.from([2]));
  return serializeProperties(p.flags | F_DELIVERY_MODE, p.fields);
}

function serializeProperties(flags: number, fields: Map<number, Buffer>): Buffer {
  const out: Buffer[] = [Buffer.from([flags >> 8, flags & 0xff])];
  for (const [flag] of PROPERTY_LAYOUT) if (flags & flag) out.push(fields.get(flag)!);
  return Buffer.concat(out);
}

// ---------------------------------------------------------------------------------------------
// Writing the publish ourselves, through amqplib's channel bookkeeping.

const FRAME_METHOD = 1;
const FRAME_HEADER = 2;
const FRAME_END = 0xce;
const RAW_OUT = Symbol.for("dlq-console.rawPropertiesOut");

interface InternalChannel {
  ch: number;
  connection: {
    frameMax: number;
    channels: Array<{ buffer: { write(b: Buffer): boolean } } | undefined>;
    sendContent(ch: number, body: Buffer): boolean;
    sentSinceLastCheck?: boolean;
  };
  sendMessage(fields: Record<string, unknown>, props: Record<PropertyKey, unknown>, content: Buffer): boolean;
  [RAW_OUT]?: Buffer | null;
}

function shortstr(s: string): Buffer {
  const b = Buffer.from(s, "utf8");
  if (b.length > 255) throw new RangeError("shortstr longer than 255 bytes");
  return Buffer.concat([Buffer.from([b.length]), b]);
}

function frame(type: number, channel: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(7);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(channel, 1);
  head.writeUInt32BE(payload.length, 3);
  return Buffer.concat([head, payload, Buffer.from([FRAME_END])]);
}

export function publishMethodFrame(channel: number, exchange: string, routingKey: string, mandatory: boolean): Buffer {
  const cls = Buffer.alloc(6);
  cls.writeUInt16BE(60, 0); // basic
  cls.writeUInt16BE(40, 2); // publish
  cls.writeUInt16BE(0, 4); // reserved-1 (ticket)
  return frame(
    FRAME_METHOD,
    channel,
    Buffer.concat([cls, shortstr(exchange), shortstr(routingKey), Buffer.from([mandatory ? 1 : 0])]),
  );
}

export function contentHeaderFrame(channel: number, bodySize: number, properties: Buffer): Buffer {
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(60, 0);
  fixed.writeUInt16BE(0, 2);
  fixed.writeBigUInt64BE(BigInt(bodySize), 4);
  return frame(FRAME_HEADER, channel, Buffer.concat([fixed, properties]));
}

/**
 * Makes `ch.publish` write the given raw properties instead of amqplib's encoding, for the next
 * publish only. Returns false when amqplib's internals do not have the expected shape.
 */
export function installRawPublish(ch: ConfirmChannel): boolean {
  const c = ch as unknown as InternalChannel;
  if (
    typeof c.ch !== "number" ||
    !c.connection ||
    typeof c.connection.sendContent !== "function" ||
    !Array.isArray(c.connection.channels)
  )
    return false;
  if (typeof c.sendMessage !== "function") return false;
  const original = c.sendMessage;
  c.sendMessage = function rawSendMessage(this: InternalChannel, fields, props, content) {
    const raw = this[RAW_OUT];
    if (!raw) return original.call(this, fields, props, content);
    this[RAW_OUT] = null;
    const conn = this.connection;
    const out = conn.channels[this.ch]?.buffer;
    if (!out) throw new Error("Channel closed");
    const header = contentHeaderFrame(this.ch, content.length, raw);
    if (header.length > conn.frameMax)
      throw new RangeError(`properties of ${header.length} bytes exceed the frame size ${conn.frameMax}`);
    out.write(
      Buffer.concat([
        publishMethodFrame(this.ch, String(fields.exchange), String(fields.routingKey), Boolean(fields.mandatory)),
        header,
      ]),
    );
    conn.sentSinceLastCheck = true;
    if (content.length === 0) return true;
    return conn.sendContent(this.ch, content);
  };
  return true;
}

/** Publishes `content` with exactly these raw properties; `cb` is amqplib's confirm callback. */
export function publishRaw(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  rawProps: Buffer,
  cb: (err: unknown) => void,
): boolean {
  (ch as unknown as InternalChannel)[RAW_OUT] = rawProps;
  try {
    return ch.publish(exchange, routingKey, content, { mandatory: true, persistent: true }, cb);
  } finally {
    (ch as unknown as InternalChannel)[RAW_OUT] = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Targets.

export interface Route {
  exchange: string;
  routingKey: string;
  /** In the operator's words. */
  words: string;
}

export function describeRoute(exchange: string, routingKey: string): string {
  return exchange === ""
    ? `default exchange, routing key "${routingKey}" (queue "${routingKey}")`
    : `exchange "${exchange}", routing key "${routingKey}"`;
}

/**
 * Where "origin" sends a letter: straight to the queue it last died in (x-death[0].queue, most
 * recent first), through the default exchange. Not through x-death[0]'s exchange and routing key:
 * on a fanout or topic exchange that would copy the letter to every other queue bound there too,
 * whose consumers already handled it. Then x-first-death-queue; then Spring AMQP's
 * x-original-exchange / x-original-routingKey (a republished failure has no x-death); then the
 * DLQ's configured origin queue.
 */
export function originRoute(msg: ConsumeMessage, configOrigin: string | null): Route | { error: string } {
  const headers = decodeHeaders(msg);
  const [last] = parseXDeath(headers);
  if (last?.queue) return { exchange: "", routingKey: last.queue, words: describeRoute("", last.queue) };
  const firstQueue = displayText(findHeader(headers, "x-first-death-queue"));
  if (firstQueue) return { exchange: "", routingKey: firstQueue, words: describeRoute("", firstQueue) };
  const springExchange = displayText(findHeader(headers, "x-original-exchange"));
  const springKey = displayText(findHeader(headers, "x-original-routingKey"));
  if (springExchange !== null && springKey)
    return { exchange: springExchange, routingKey: springKey, words: describeRoute(springExchange, springKey) };
  if (configOrigin) return { exchange: "", routingKey: configOrigin, words: describeRoute("", configOrigin) };
  return {
    error:
      "Its origin cannot be derived: it has no x-death entry, no x-first-death-queue or Spring x-original-* headers, and the DLQ has no origin in the config. Choose a target queue explicitly.",
  };
}

// ---------------------------------------------------------------------------------------------
// One walk from the head of the DLQ, shared by move, remove and move to safety (safe-move.ts): find
// each requested letter and check its checksum (or take every letter present at the start), hand it
// to a "deliver" step, and ack it only when that step says its copy is safe.
//
// Read-ahead starts at the pipeline's size (2 × maxInFlight letters, at least 16) and the reader's
// credit is refilled as letters are acked, so a walk whose letters are at the head reads barely more
// than it needs, and the few letters read ahead are handed back when the channel closes; windows
// double (up to 5,000) only while skipped letters fill them. (A first window of thousands of
// letters, handed back after every call, made each call of a job cost ~0.2 s: issue 6.) A channel
// is not kept open between calls: its unacked letters would be invisible to every other reader of
// the DLQ (browse, scan, the breaker's look for returns) for as long as the job runs.

export interface MoverContext {
  endpoint: string;
  /** The user the console publishes as: RabbitMQ refuses a user-id property that differs from it. */
  username: string;
  configOrigin: string | null;
  describe(name: string): Promise<DlqSummary>;
  /**
   * The DLQ's read risk, or null; throws not_found for a queue that is not a DLQ the console knows.
   * Cheaper than `describe` (no AMQP round trips while the adapter's snapshot is fresh): the walk's
   * own checkQueue finds a queue deleted since.
   */
  readRisk(name: string): Promise<ReadRisk | null>;
  /** A confirm channel on the adapter's connection (raw-header hook installed). */
  confirmChannel(): Promise<ConfirmChannel>;
  /** A throwaway channel for passive checks (a 404 closes it). */
  channel(): Promise<Channel>;
  idleMs: number;
  bufferBytes: number;
  busyWaitMs: number;
  /** Letters published and not yet confirmed at once (the crash window). Default 64. */
  maxInFlight?: number;
}

type Settled<Out> = { ack: boolean; out: Out };

/** A letter read and not acked. */
export interface WalkedLetter {
  m: ConsumeMessage;
  ident: ReturnType<typeof letterIdOf>;
}

/** One walk's channel: reads (never acked unless delivered) and publishes. */
export interface Walk {
  ch: ConfirmChannel;
  reader: QueueReader;
  /** Letters in the DLQ when the walk opened: the reader stops after this many. */
  depth: number;
  /** Why RabbitMQ returned a publish, by the walk's return key (x-dlq-replay-id unless the walk set another); one reason per return. */
  returned: Map<string, string[]>;
  channelError: unknown;
  /** Set when the walk itself closes the channel (a close then is not an error). */
  closing?: boolean;
}

/** What happens to one selected letter (for requested letters: one whose checksum matched). */
export interface DeliverStep<R, Out> {
  /** Letters whose delivery is pending at once; 1 makes deliveries strictly one after another. */
  maxInFlight: number;
  /** A result now (the letter stays), or a pending delivery whose settlement decides the ack. */
  deliver(
    req: R,
    l: WalkedLetter,
    w: Walk,
    position: number,
  ): Promise<{ done: Out } | { pending: Promise<Settled<Out>> }>;
}

/** The letters a walk hands to its step. */
export type WalkSelection<R, Out> =
  | {
      /** These letters, by letter id; each one's bytes must still match its checksum. */
      requests: R[];
      duplicate(req: R): Out;
      mismatch(req: R): Out;
      missing(req: R): Out;
    }
  | {
      /** Every letter in the DLQ when the walk opens (its depth then, or until the DLQ is empty), in order, each as the request this makes of it. */
      every(l: WalkedLetter): R;
    };

export interface WalkOptions {
  signal?: AbortSignal;
  acceptRisk?: boolean;
  /** The key under which a basic.return is noted in `Walk.returned` (default: its x-dlq-replay-id header). */
  returnKey?: (m: ConsumeMessage) => string | null;
  /** Called once the walk has opened, before any letter is delivered. */
  onOpen?: (w: Walk) => void;
}

function replayIdOf(m: ConsumeMessage): string | null {
  const id = ((m.properties.headers ?? {}) as Record<string, unknown>)[REDRIVE_HEADERS.replayId];
  return typeof id === "string" ? id : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function checkOnSideChannel(ctx: MoverContext, f: (ch: Channel) => Promise<unknown>): Promise<unknown> {
  const ch = await ctx.channel();
  try {
    await f(ch);
    return null;
  } catch (e) {
    return e;
  } finally {
    await closeQuietly(ch);
  }
}

export function is404(e: unknown): boolean {
  const err = e as { code?: number; message?: string };
  return err?.code === 404 || /NOT.FOUND/.test(err?.message ?? "");
}

/** Risk guard, then one confirm channel with an exclusive consumer (retried while another reader holds the queue). */
async function openWalk(ctx: MoverContext, dlq: string, opts: WalkOptions, startWindow: number): Promise<Walk> {
  const risk = await ctx.readRisk(dlq);
  if (risk && !opts.acceptRisk)
    throw new BrokerError("risky_read", { userMessage: risk.message, details: { readRisk: risk } });
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const ch = await ctx.confirmChannel();
    try {
      if (!installRawPublish(ch))
        throw new BrokerError("protocol", {
          userMessage:
            "The console's RabbitMQ client library changed shape: letters cannot be republished byte-exact, so nothing is moved.",
        });
      const depth = (await ch.checkQueue(dlq)).messageCount;
      const reader = new QueueReader(ch, dlq, {
        max: depth,
        idleMs: ctx.idleMs,
        bufferBytes: ctx.bufferBytes,
        minWindow: 4,
        maxWindow: 5000,
        startWindow,
        exclusive: true,
      });
      await reader.start();
      const w: Walk = { ch, reader, depth, returned: new Map(), channelError: null };
      const returnKey = opts.returnKey ?? replayIdOf;
      ch.on("return", (m: ConsumeMessage) => {
        const key = returnKey(m);
        const f = m.fields as unknown as {
          replyCode?: number;
          replyText?: string;
          exchange: string;
          routingKey: string;
        };
        if (key === null) return;
        const reason = `RabbitMQ returned it as unroutable (${f.replyCode ?? "?"} ${f.replyText ?? ""}): ${describeRoute(f.exchange, f.routingKey)} has no queue bound for it. It stays in the DLQ.`;
        const noted = w.returned.get(key);
        if (noted) noted.push(reason);
        else w.returned.set(key, [reason]);
      });
      ch.on("error", (e: unknown) => {
        w.channelError ??= e;
      });
      // A channel that closes under the walk (connection lost, broker stopping) ends the reader as
      // if the queue were exhausted: without this, the letters not reached yet would be reported
      // "missing" instead of the move failing as "unreachable" (and being retried).
      ch.on("close", () => {
        if (!w.closing) w.channelError ??= new Error("Channel closed while the DLQ was being read");
      });
      return w;
    } catch (e) {
      await closeQuietly(ch);
      const mapped = mapAmqpError(e, { endpoint: ctx.endpoint, queue: dlq });
      if (mapped.kind === "throttled" && Date.now() - started < ctx.busyWaitMs) {
        await sleep(Math.min(1000, 50 * 2 ** attempt));
        continue;
      }
      throw mapped;
    }
  }
}

export async function* forRequestedLetters<R extends { letterId: string; sha256: string }, Out>(
  ctx: MoverContext,
  dlq: string,
  selection: WalkSelection<R, Out>,
  opts: WalkOptions,
  step: DeliverStep<R, Out>,
): AsyncGenerator<Out> {
  const requested = "requests" in selection ? selection : null;
  const every = "every" in selection ? selection.every : null;
  // 1. Requests: one per letter id.
  const wanted = new Map<string, R>();
  if (requested) {
    for (const r of requested.requests) {
      if (wanted.has(r.letterId)) {
        yield requested.duplicate(r);
        continue;
      }
      wanted.set(r.letterId, r);
    }
    if (wanted.size === 0) return;
  }

  // 2. One pass from the head on one confirm channel.
  const w = await openWalk(ctx, dlq, opts, Math.max(16, Math.min(5000, 2 * step.maxInFlight)));
  opts.onOpen?.(w);
  // `done` turns true when the letter's outcome is known, so the loop checks the head without an await per letter.
  type InFlight = { l: WalkedLetter; p: Promise<Settled<Out>>; done: boolean };
  const inflight: InFlight[] = [];
  // Acks: one basic.ack with multiple=true covers a run of settled letters, but it would also take
  // any earlier letter left unacked on purpose (not requested, checksum mismatch, failed). So runs
  // are only acked together below the first such letter ("hole"); after it, one ack per letter.
  let firstHole = Number.POSITIVE_INFINITY;
  let acked = 0;
  const hole = (m: ConsumeMessage) => (firstHole = Math.min(firstHole, m.fields.deliveryTag));
  /** Settles the head (waiting for it) and every settled letter after it; acks them, then returns their results in order. */
  const settleHeads = async (): Promise<Out[]> => {
    const group = [inflight.shift()!];
    while (inflight.length > 0 && inflight[0].done) group.push(inflight.shift()!);
    const results = await Promise.all(group.map((f) => f.p));
    let run: ConsumeMessage | null = null;
    for (let i = 0; i < group.length; i++) {
      const m = group[i].l.m;
      if (!results[i].ack) {
        hole(m);
        continue;
      }
      // The step confirmed the copy is safe elsewhere: now, and only now, the DLQ copy goes.
      if (m.fields.deliveryTag < firstHole) run = m;
      else w.ch.ack(m);
      w.reader.acked(m);
      acked++;
    }
    if (run) w.ch.ack(run, true);
    return results.map((r) => r.out);
  };
  try {
    const occ = new OccurrenceCounter();
    for (let pos = 0; every || wanted.size > 0; pos++) {
      if (opts.signal?.aborted || w.channelError) break;
      // Results settle while we read on.
      while (inflight.length > 0 && (inflight.length >= step.maxInFlight || inflight[0].done))
        yield* await settleHeads();
      const m = await w.reader.next(opts.signal);
      if (!m) break;
      const ident = letterIdOf(m, occ);
      let req: R;
      if (every) req = every({ m, ident });
      else {
        const r = wanted.get(ident.id);
        if (!r) {
          hole(m); // Not requested: stays unacked, returns in order when the channel closes.
          continue;
        }
        wanted.delete(ident.id);
        if (ident.sha256 !== r.sha256.toLowerCase()) {
          hole(m);
          yield requested!.mismatch(r);
          continue;
        }
        req = r;
      }
      const d = await step.deliver(req, { m, ident }, w, pos);
      if ("done" in d) {
        hole(m);
        yield d.done;
      } else {
        const f: InFlight = { l: { m, ident }, p: d.pending, done: false };
        void d.pending.then(
          () => (f.done = true),
          () => (f.done = true),
        );
        inflight.push(f);
      }
    }
    while (inflight.length > 0) yield* await settleHeads();
    if (w.channelError) throw mapAmqpError(w.channelError, { endpoint: ctx.endpoint, queue: dlq });
    // AMQP never answers an ack, and a connection that breaks can take acks already sent with it
    // (a broker that stops reading its socket has not processed them yet): those letters, reported
    // removed, would be back in the DLQ. The broker handles a channel's frames in order, so an
    // answer to any request on this channel proves every ack before it was handled. Without that
    // answer the call fails, and the caller treats its removals as unconfirmed (the redrive's
    // leftover check).
    if (acked > 0) await w.ch.checkQueue(dlq);
    if (requested && !opts.signal?.aborted) for (const req of wanted.values()) yield requested.missing(req);
  } catch (e) {
    throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: dlq });
  } finally {
    // Closing returns every letter not acked to the DLQ, in order; pending acks go out first.
    w.closing = true;
    await closeQuietly(w.ch);
  }
}

/**
 * Publishes with mandatory + persistent on the walk's confirm channel; settles on the confirm (a
 * nack or return fails). `returnKey`: the key the walk notes this letter's basic.return under.
 * `sharedKey`: other letters may have the same key, and a return cannot be told apart from theirs
 * (confirms may come in any order), so a noted return is kept and fails every letter with that key
 * confirmed after it: such a letter stays in the DLQ (a possible duplicate, never a loss).
 */
export function publishConfirmed(
  w: Walk,
  route: Route,
  content: Buffer,
  props: Buffer,
  returnKey: string,
  sharedKey = false,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    publishRaw(w.ch, route.exchange, route.routingKey, content, props, (err) => {
      const noted = w.returned.get(returnKey);
      const ret = sharedKey ? noted?.[0] : noted?.shift();
      if (noted && noted.length === 0) w.returned.delete(returnKey);
      if (err)
        resolve({
          ok: false,
          reason: `RabbitMQ did not confirm the copy (${(err as Error).message ?? err}). It stays in the DLQ.`,
        });
      else if (ret) resolve({ ok: false, reason: ret });
      else resolve({ ok: true });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Move: deliver = publish to the target and wait for the broker's confirm.

const moved = (
  req: MoveRequest,
  outcome: MoveResult["outcome"],
  destination: string | null,
  reason: string | null,
): MoveResult => ({
  letterId: req.letterId,
  outcome,
  destination,
  reason,
  orderingKey: null,
});

/** `opts.heldKeys` never applies: RabbitMQ letters have no ordering key (`orderingKey` is always null). */
export async function* moveLetters(
  ctx: MoverContext,
  dlq: string,
  requests: MoveRequest[],
  opts: MoveOptions = {},
): AsyncGenerator<MoveResult> {
  // A repaired letter must be archived before it leaves the DLQ: without the hook it would be gone
  // unrecorded once its copy is confirmed, so the whole call is refused before anything is read.
  if (!opts.beforeRemove && requests.some((r) => r.repair)) {
    throw new BrokerError("bad_request", {
      message: "moveLetters: repair without beforeRemove",
      userMessage:
        "A repair needs the original archived before it leaves the DLQ, and this move had no archive step. Nothing was moved.",
    });
  }
  // Up front: explicit targets exist (nothing has moved yet). The DLQ itself is checked when the walk opens.
  const targetQueues = new Set<string>();
  for (const r of requests) if (r.target.kind === "queue") targetQueues.add(r.target.name);
  for (const name of targetQueues) {
    if (name === dlq)
      throw new BrokerError("bad_request", {
        userMessage: `The target queue "${name}" is the DLQ itself: choose another target. Nothing was moved.`,
      });
    const e = await checkOnSideChannel(ctx, (ch) => ch.checkQueue(name));
    if (e && is404(e))
      throw new BrokerError("not_found", {
        cause: e,
        userMessage: `The target queue "${name}" does not exist on RabbitMQ at ${ctx.endpoint}. Nothing was moved; create the queue or choose another target.`,
      });
    if (e) throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: name });
  }
  const exchangeChecked = new Map<string, string | null>(); // exchange → problem or null
  let archiveChain: Promise<void> = Promise.resolve();

  const selection: WalkSelection<MoveRequest, MoveResult> = {
    requests,
    duplicate: (r) => moved(r, "failed", null, "This letter was requested twice in the same move; it is moved once."),
    mismatch: (r) =>
      moved(
        r,
        "checksum_mismatch",
        null,
        "The letter's bytes no longer match the checksum recorded when it was indexed; it was not moved. Re-scan the DLQ and check it again.",
      ),
    missing: (r) =>
      moved(
        r,
        "missing",
        null,
        `The letter is no longer in "${dlq}": it may have been consumed, moved or expired since it was indexed.`,
      ),
  };
  yield* forRequestedLetters<MoveRequest, MoveResult>(ctx, dlq, selection, opts, {
    maxInFlight: Math.max(1, Math.min(5000, opts.maxInFlight ?? ctx.maxInFlight ?? 64)),
    async deliver(req, l, w, position) {
      const m = l.m;
      const refusedRepair = req.repair ? repairRefusal(req.repair) : null;
      if (refusedRepair) return { done: moved(req, "failed", null, refusedRepair) };
      let route: Route;
      if (req.target.kind === "queue")
        route = { exchange: "", routingKey: req.target.name, words: describeRoute("", req.target.name) };
      else {
        const r = originRoute(m, ctx.configOrigin);
        if ("error" in r) return { done: moved(req, "failed", null, r.error) };
        route = r;
      }
      if (route.exchange !== "") {
        if (!exchangeChecked.has(route.exchange)) {
          const e = await checkOnSideChannel(ctx, (c) => c.checkExchange(route.exchange));
          if (e && !is404(e)) throw mapAmqpError(e, { endpoint: ctx.endpoint });
          exchangeChecked.set(
            route.exchange,
            e
              ? `The exchange "${route.exchange}" no longer exists, so the letter cannot go back where it came from. It stays in the DLQ; choose a target queue explicitly.`
              : null,
          );
        }
        const problem = exchangeChecked.get(route.exchange);
        if (problem) return { done: moved(req, "failed", route.words, problem) };
      }
      const raw = rawPropertiesOf(m.properties);
      if (!raw)
        return {
          done: moved(
            req,
            "failed",
            route.words,
            "The console did not capture this letter's raw headers, so it cannot republish them exactly; it was not moved.",
          ),
        };
      let props: Buffer;
      try {
        const parsed = parseProperties(raw);
        const refused = userIdRefusal(parsed, ctx.username);
        if (refused) return { done: moved(req, "failed", route.words, `${refused} It was not moved.`) };
        const existingMessageId = shortstrOf(parsed, F_MESSAGE_ID);
        const markers: MarkerValues = {
          redriveId: req.markers.redriveId,
          replayId: req.markers.replayId,
          redriveCount: req.markers.redriveCount,
          originalMessageId:
            existingMessageId && existingMessageId.length > 0 ? existingMessageId : req.markers.originalMessageId,
        };
        props = rebuildProperties(
          raw,
          markers,
          req.repair ? repairEditsOf(req.repair, req.markers.replayId) : undefined,
        );
      } catch (e) {
        return {
          done: moved(
            req,
            "failed",
            route.words,
            `The letter's properties could not be copied exactly (${(e as Error).message}); it was not moved.`,
          ),
        };
      }
      const body = req.repair?.body;
      const content = body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : m.content;
      let confirmed: ReturnType<typeof publishConfirmed>;
      try {
        confirmed = publishConfirmed(w, route, content, props, req.markers.replayId);
      } catch (e) {
        if (e instanceof RangeError)
          return {
            done: moved(
              req,
              "failed",
              route.words,
              `The letter could not be republished: ${e.message}. It stays in the DLQ.`,
            ),
          };
        throw e;
      }
      const copyId = req.repair ? req.markers.replayId : null;
      const beforeRemove = opts.beforeRemove;
      if (!beforeRemove)
        return {
          pending: confirmed.then((c) =>
            c.ok
              ? { ack: true, out: moved(req, "moved", route.words, null) }
              : { ack: false, out: moved(req, "failed", route.words, c.reason) },
          ),
        };
      // The original's copy goes to the caller only once the broker confirmed the new message, one
      // letter at a time in DLQ order (the chain), while later letters are already being published.
      const settled = archiveChain.then(async (): Promise<{ ack: boolean; out: MoveResult }> => {
        const c = await confirmed;
        if (!c.ok) return { ack: false, out: moved(req, "failed", route.words, c.reason) };
        try {
          await beforeRemove(letterCopyOf(ctx, req.letterId, l, raw, position));
        } catch (e) {
          return { ack: false, out: moved(req, "failed", route.words, archiveFailure(e, route.words, copyId)) };
        }
        return {
          ack: true,
          out: copyId ? { ...moved(req, "moved", route.words, null), copyId } : moved(req, "moved", route.words, null),
        };
      });
      archiveChain = settled.then(
        () => undefined,
        () => undefined,
      );
      return { pending: settled };
    },
  });
}

/**
 * A repair's edits as bytes: the operator's headers (text values, 'S'), the repair marker, and a
 * new message (message-id = the replay id; correlation-id only where the operator gave one).
 */
export function repairEditsOf(repair: LetterRepair, newMessageId: string): PropertyEdits {
  const headers = new Map<string, Buffer | null>();
  for (const [key, value] of headerEdits(repair)) headers.set(key, value === null ? null : longstrEntry(key, value));
  headers.set(nameKey(REPAIR_HEADER), longstrEntry(REPAIR_HEADER, repair.operationId));
  const shortstrs = new Map<number, string>([[F_MESSAGE_ID, newMessageId]]);
  if (repair.correlationId !== undefined) shortstrs.set(F_CORRELATION_ID, repair.correlationId);
  return { headers, shortstrs };
}

/** The letter's complete copy, as the archive keeps it (the same for a discard and a repair). */
function letterCopyOf(ctx: MoverContext, letterId: string, l: WalkedLetter, raw: Buffer, position: number): LetterCopy {
  const letter = toLetter(l.m, l.ident, position, { configOrigin: ctx.configOrigin });
  const envelope = encodeEnvelope<RabbitEnvelope>("rabbitmq", l.m.content, {
    properties: b64(raw),
    exchange: l.m.fields.exchange,
    routingKey: l.m.fields.routingKey,
  });
  return { letterId, letter, envelope };
}

/** RabbitMQ only accepts a user-id property equal to the publishing user: why this letter cannot be published, or null. */
export function userIdRefusal(parsed: ParsedProperties, username: string): string | null {
  const userId = shortstrOf(parsed, F_USER_ID);
  if (!userId || userId.toString("utf8") === username) return null;
  return `The letter carries user-id "${userId.toString("utf8")}", and RabbitMQ only accepts a user-id equal to the publishing user ("${username}").`;
}

// ---------------------------------------------------------------------------------------------
// Remove (discard): deliver = hand the complete copy to the caller's beforeRemove.

export interface RabbitEnvelope {
  /** basic.properties exactly as delivered, base64. */
  properties: string;
  /** The exchange and routing key it was delivered to the DLQ with (for the record). */
  exchange: string;
  routingKey: string;
}

const removed = (req: RemoveRequest, outcome: RemoveResult["outcome"], reason: string | null): RemoveResult => ({
  letterId: req.letterId,
  outcome,
  reason,
});

export async function* removeLetters(
  ctx: MoverContext,
  dlq: string,
  requests: RemoveRequest[],
  opts: RemoveOptions,
): AsyncGenerator<RemoveResult> {
  const selection: WalkSelection<RemoveRequest, RemoveResult> = {
    requests,
    duplicate: (r) => removed(r, "failed", "This letter was requested twice in the same discard; it is handled once."),
    mismatch: (r) =>
      removed(
        r,
        "checksum_mismatch",
        "The letter's bytes no longer match the checksum recorded when it was indexed; it was not discarded. Re-scan the DLQ and check it again.",
      ),
    missing: (r) =>
      removed(
        r,
        "missing",
        `The letter is no longer in "${dlq}": it may have been consumed, moved or expired since it was indexed.`,
      ),
  };
  yield* forRequestedLetters<RemoveRequest, RemoveResult>(ctx, dlq, selection, opts, {
    maxInFlight: 1,
    async deliver(req, l, _w, position) {
      const raw = rawPropertiesOf(l.m.properties);
      if (!raw)
        return {
          done: removed(
            req,
            "failed",
            "The console did not capture this letter's raw headers, so it cannot keep an exact copy; it was not discarded.",
          ),
        };
      return {
        pending: opts.beforeRemove(letterCopyOf(ctx, req.letterId, l, raw, position)).then(
          () => ({ ack: true, out: removed(req, "removed", null) }),
          (e) => ({ ack: false, out: removed(req, "failed", beforeRemoveFailure(e)) }),
        ),
      };
    },
  });
}
