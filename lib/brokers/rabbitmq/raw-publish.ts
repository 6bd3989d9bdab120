/**
 * Writing a publish ourselves, through amqplib's channel bookkeeping: amqplib re-encodes headers
 * from its own decoding (amqp-properties.ts says what that loses), so for one publish at a time
 * `publishRaw` makes the channel write the basic.publish and content-header frames with the given
 * raw basic.properties, while amqplib still numbers the publish and tracks its confirm.
 * `installRawPublish` patches a confirm channel once; it refuses when amqplib's internals changed.
 */
import type { ConfirmChannel } from "amqplib";
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
