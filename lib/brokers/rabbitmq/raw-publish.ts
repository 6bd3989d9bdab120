/**
 * Writing a publish ourselves, through amqplib's channel bookkeeping: amqplib re-encodes headers
 * from its own decoding (amqp-properties.ts says what that loses), so for one publish at a time
 * `publishRaw` makes the channel write the basic.publish and content-header frames with the given
 * raw basic.properties, while amqplib still numbers the publish and tracks its confirm.
 * `installRawPublish` patches a confirm channel once; it refuses when amqplib's internals changed.
 */
import type { ChannelModel, ConfirmChannel } from "amqplib";
import { shortstr } from "@/lib/brokers/rabbitmq/amqp-properties";

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

const FRAME_BODY = 3;
/** A frame's type, channel and size, and its end octet. */
const FRAME_OVERHEAD = 8;
/** Bodies up to this size go out in the same buffer as their publish (one socket write, one allocation). */
const ONE_WRITE_BODY = 64 * 1024;

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

/** The size of the content header frame of these raw properties (what must fit the connection's frame size). */
export const contentHeaderFrameSize = (properties: Buffer) => FRAME_OVERHEAD + 12 + properties.length;

/** A frame's type, channel and payload size at `at`; returns the position of its payload. */
function frameHead(buf: Buffer, at: number, type: number, channel: number, payload: number): number {
  buf[at] = type;
  buf.writeUInt16BE(channel, at + 1);
  buf.writeUInt32BE(payload, at + 3);
  return at + 7;
}

/**
 * The basic.publish method frame, the content header frame and, when `body` is given, its one body
 * frame, written into one buffer: the same bytes as publishMethodFrame, contentHeaderFrame and a
 * body frame one after another (mover.test.ts), in one allocation and one socket write.
 */
export function publishFrames(
  channel: number,
  exchange: string,
  routingKey: string,
  mandatory: boolean,
  bodySize: number,
  properties: Buffer,
  body: Buffer | null,
): Buffer {
  const ex = Buffer.byteLength(exchange, "utf8");
  const rk = Buffer.byteLength(routingKey, "utf8");
  if (ex > 255 || rk > 255) throw new RangeError("shortstr longer than 255 bytes");
  const method = 6 + 1 + ex + 1 + rk + 1;
  const header = 12 + properties.length;
  const size = FRAME_OVERHEAD + method + FRAME_OVERHEAD + header + (body ? FRAME_OVERHEAD + body.length : 0);
  const buf = Buffer.allocUnsafe(size);
  let at = frameHead(buf, 0, FRAME_METHOD, channel, method);
  buf.writeUInt16BE(60, at); // basic
  buf.writeUInt16BE(40, at + 2); // publish
  buf.writeUInt16BE(0, at + 4); // reserved-1 (ticket)
  buf[at + 6] = ex;
  at += 7 + buf.write(exchange, at + 7, "utf8");
  buf[at] = rk;
  at += 1 + buf.write(routingKey, at + 1, "utf8");
  buf[at++] = mandatory ? 1 : 0;
  buf[at++] = FRAME_END;
  at = frameHead(buf, at, FRAME_HEADER, channel, header);
  buf.writeUInt16BE(60, at);
  buf.writeUInt16BE(0, at + 2);
  // body-size, a 64-bit integer: a body is far below 2^53 bytes.
  buf.writeUInt32BE(Math.floor(bodySize / 0x100000000), at + 4);
  buf.writeUInt32BE(bodySize >>> 0, at + 8);
  at += 12 + properties.copy(buf, at + 12);
  buf[at++] = FRAME_END;
  if (body) {
    at = frameHead(buf, at, FRAME_BODY, channel, body.length);
    at += body.copy(buf, at);
    buf[at++] = FRAME_END;
  }
  return buf;
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
    const headerSize = contentHeaderFrameSize(raw);
    if (headerSize > conn.frameMax)
      throw new RangeError(`properties of ${headerSize} bytes exceed the frame size ${conn.frameMax}`);
    // A body that fits one frame goes in the same buffer (as amqplib's own sendMessage does for small messages).
    const whole = content.length > 0 && content.length <= Math.min(ONE_WRITE_BODY, conn.frameMax - FRAME_OVERHEAD);
    const frames = publishFrames(
      this.ch,
      String(fields.exchange),
      String(fields.routingKey),
      Boolean(fields.mandatory),
      content.length,
      raw,
      whole ? content : null,
    );
    conn.sentSinceLastCheck = true;
    if (whole || content.length === 0) return out.write(frames);
    out.write(frames);
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

interface InternalMux {
  out?: { cork?: () => void; uncork?: () => void };
  _readIncoming?: () => void;
}

/**
 * Makes the connection write each round of its outgoing frames to the socket at once. amqplib's
 * muxer writes every frame it takes from a channel with its own `socket.write` (a syscall each:
 * a mover's publishes and acks cost one each, about 10 µs per letter in the redrive bench's
 * profile); corked for the round, the socket sends them with one writev when the round ends.
 * Nothing else changes: the same frames, in the same order, and `write`'s backpressure answer is
 * the same. Returns false (and changes nothing) when amqplib's internals do not have that shape.
 */
export function installBatchedWrites(model: ChannelModel): boolean {
  const mux = (model as unknown as { connection?: { muxer?: InternalMux } }).connection?.muxer;
  const out = mux?.out;
  const original = mux?._readIncoming;
  if (!mux || typeof original !== "function" || typeof out?.cork !== "function" || typeof out.uncork !== "function")
    return false;
  mux._readIncoming = function batchedReadIncoming(this: InternalMux) {
    const socket = this.out!;
    socket.cork!();
    try {
      original.call(this);
    } finally {
      socket.uncork!();
    }
  };
  return true;
}
