/**
 * Keeps the raw header table of each delivered message next to amqplib's decoded properties, so
 * `field-table.ts` can decode it exactly. amqplib 2.3.1 (pinned) parses frames in
 * `Connection#recvFrame`, which calls itself through `this`: wrapping it on the instance sees
 * every frame with the buffer it was parsed from. If amqplib's internals ever change shape, the
 * hook does nothing and the adapter falls back to amqplib's decoded headers.
 */
import type { ChannelModel } from "amqplib";

export const RAW_HEADERS = Symbol.for("dlq-console.rawHeaders");

const FRAME_HEADER = 2;
const BASIC_CLASS = 60;
const FRAME_HEADER_BYTES = 7; // type(1) channel(2) size(4)
const CONTENT_HEADER_FIXED = 12; // class(2) weight(2) body-size(8)

interface InternalConnection {
  rest: Buffer;
  recvFrame: () => unknown;
}

export function installRawHeaderHook(model: ChannelModel): boolean {
  const conn = (model as unknown as { connection?: InternalConnection }).connection;
  if (!conn || typeof conn.recvFrame !== "function" || !Buffer.isBuffer(conn.rest)) return false;
  const original = conn.recvFrame;
  conn.recvFrame = function patchedRecvFrame(this: InternalConnection) {
    const before = this.rest;
    const frame = original.call(this) as { id?: number; size?: number; fields?: Record<PropertyKey, unknown> } | false;
    if (frame && frame.size !== undefined && frame.fields && !(RAW_HEADERS in frame.fields)) {
      try {
        const size = before.length >= FRAME_HEADER_BYTES ? before.readUInt32BE(3) : -1;
        if (
          size >= CONTENT_HEADER_FIXED &&
          before.length > FRAME_HEADER_BYTES + size &&
          before[FRAME_HEADER_BYTES + size] === 0xce &&
          before.readUInt8(0) === FRAME_HEADER &&
          before.readUInt16BE(FRAME_HEADER_BYTES) === BASIC_CLASS
        ) {
          const props = before.subarray(FRAME_HEADER_BYTES + CONTENT_HEADER_FIXED, FRAME_HEADER_BYTES + size);
          // Copy: a subarray would keep the whole socket chunk alive.
          Object.defineProperty(frame.fields, RAW_HEADERS, { value: Buffer.from(props), enumerable: false });
        }
      } catch {
        // Leave the frame as amqplib decoded it.
      }
    }
    return frame;
  };
  return true;
}

/** The raw basic.properties bytes captured for a message, if the hook saw it. */
export function rawPropertiesOf(properties: object): Buffer | null {
  const v = (properties as Record<PropertyKey, unknown>)[RAW_HEADERS];
  return Buffer.isBuffer(v) ? v : null;
}
