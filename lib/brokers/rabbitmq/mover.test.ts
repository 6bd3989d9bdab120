import type { ConsumeMessage } from "amqplib";
import { describe, expect, it } from "vitest";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import { decodeFieldTable } from "@/lib/brokers/rabbitmq/field-table";
import { RAW_HEADERS } from "@/lib/brokers/rabbitmq/raw-headers";
import {
  int32Entry,
  longstrEntry,
  parseProperties,
  rebuildProperties,
  redriveProperties,
  shortstrOf,
  tableEntries,
  UserIdRefused,
} from "@/lib/brokers/rabbitmq/amqp-properties";
import { contentHeaderFrame, publishFrames, publishMethodFrame } from "@/lib/brokers/rabbitmq/raw-publish";
import { describeRoute, originRoute, routeQueue } from "@/lib/brokers/rabbitmq/route";
import { twinOf } from "@/lib/brokers/rabbitmq/identity";
import { RequestBook } from "@/lib/brokers/move-rules";

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const sstr = (s: string | Buffer) => {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s);
  return Buffer.concat([Buffer.from([b.length]), b]);
};
const e = (name: string, tag: string, payload: Buffer) =>
  Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from(tag), payload]);

function props(opts: {
  table?: Buffer;
  messageId?: string | Buffer;
  deliveryMode?: number;
  userId?: string;
  timestamp?: bigint;
}) {
  let flags = 0x8000; // content-type
  const parts: Buffer[] = [sstr("application/json")];
  if (opts.table) {
    flags |= 0x2000;
    parts.push(u32(opts.table.length), opts.table);
  }
  if (opts.deliveryMode !== undefined) {
    flags |= 0x1000;
    parts.push(Buffer.from([opts.deliveryMode]));
  }
  if (opts.messageId !== undefined) {
    flags |= 0x0080;
    parts.push(sstr(opts.messageId));
  }
  if (opts.timestamp !== undefined) {
    flags |= 0x0040;
    const t = Buffer.alloc(8);
    t.writeBigUInt64BE(opts.timestamp);
    parts.push(t);
  }
  if (opts.userId !== undefined) {
    flags |= 0x0010;
    parts.push(sstr(opts.userId));
  }
  return Buffer.concat([Buffer.from([flags >> 8, flags & 0xff]), ...parts]);
}

const big = Buffer.alloc(8);
big.writeBigInt64BE(9007199254740993n);
const badUtf8 = Buffer.from([0xc3, 0x28, 0xff]);
const exoticTable = Buffer.concat([
  e("x-big", "l", big),
  e("x-bad", "S", Buffer.concat([u32(badUtf8.length), badUtf8])),
  e("7", "b", Buffer.from([0x81])), // integer-like name: a JS object would reorder it
  e("x-void", "V", Buffer.alloc(0)),
  e("x-arr", "A", Buffer.concat([u32(7), Buffer.from("I"), u32(5), Buffer.from("t"), Buffer.from([1])])),
]);
const markers = { redriveId: "job-1", replayId: "replay-1", redriveCount: 1, originalMessageId: "m-1" };

describe("rebuildProperties: byte-exact copy with the markers", () => {
  it("keeps every header entry and property byte for byte, appends the markers, sets persistent", () => {
    const raw = props({ table: exoticTable, messageId: "m-1", deliveryMode: 1, timestamp: 1700000000n });
    const out = rebuildProperties(raw, markers);
    const before = parseProperties(raw);
    const after = parseProperties(out);
    expect(after.flags).toBe(before.flags);
    for (const [flag, bytes] of before.fields) {
      if (flag === 0x2000) continue;
      if (flag === 0x1000) expect([...after.fields.get(flag)!]).toEqual([2]);
      else expect(after.fields.get(flag)!.equals(bytes)).toBe(true);
    }
    const entries = tableEntries(after.fields.get(0x2000)!.subarray(4));
    expect(entries.map((x) => x.name)).toEqual([
      "x-big",
      "x-bad",
      "7",
      "x-void",
      "x-arr",
      REDRIVE_HEADERS.redriveId,
      REDRIVE_HEADERS.replayId,
      REDRIVE_HEADERS.redriveCount,
      REDRIVE_HEADERS.originalMessageId,
    ]);
    expect(Buffer.concat(entries.slice(0, 5).map((x) => x.bytes)).equals(exoticTable)).toBe(true);
    const decoded = decodeFieldTable(after.fields.get(0x2000)!.subarray(4));
    expect(decoded.find((h) => h.name === "x-big")!.value).toEqual({ t: "number", v: "9007199254740993" });
    expect(decoded.find((h) => h.name === "x-bad")!.value).toEqual({
      t: "bytes",
      v: badUtf8.toString("base64"),
      size: 3,
    });
    expect(decoded.find((h) => h.name === REDRIVE_HEADERS.redriveCount)!.value).toEqual({ t: "number", v: "1" });
    expect(decoded.find((h) => h.name === REDRIVE_HEADERS.originalMessageId)!.value).toEqual({ t: "string", v: "m-1" });
  });

  it("replaces earlier markers in place (count replaced, not appended) and keeps the original message id", () => {
    const table = Buffer.concat([
      longstrEntry(REDRIVE_HEADERS.redriveId, "old-job"),
      e("x-app", "S", Buffer.concat([u32(1), Buffer.from("a")])),
      int32Entry(REDRIVE_HEADERS.redriveCount, 1),
      longstrEntry(REDRIVE_HEADERS.originalMessageId, "first"),
      longstrEntry(REDRIVE_HEADERS.replayId, "old-replay"),
    ]);
    const out = rebuildProperties(props({ table, messageId: "second" }), {
      ...markers,
      redriveCount: 2,
      originalMessageId: "second",
    });
    const decoded = decodeFieldTable(parseProperties(out).fields.get(0x2000)!.subarray(4));
    expect(decoded.map((h) => h.name)).toEqual([
      REDRIVE_HEADERS.redriveId,
      "x-app",
      REDRIVE_HEADERS.redriveCount,
      REDRIVE_HEADERS.originalMessageId,
      REDRIVE_HEADERS.replayId,
    ]);
    expect(decoded.map((h) => h.value)).toEqual([
      { t: "string", v: "job-1" },
      { t: "string", v: "a" },
      { t: "number", v: "2" },
      { t: "string", v: "first" },
      { t: "string", v: "replay-1" },
    ]);
  });

  it("adds a header table and delivery-mode when the letter had neither; omits the original id when there is none", () => {
    const out = rebuildProperties(props({}), { ...markers, originalMessageId: null });
    const p = parseProperties(out);
    expect(p.flags & 0x3000).toBe(0x3000);
    expect(decodeFieldTable(p.fields.get(0x2000)!.subarray(4)).map((h) => h.name)).toEqual([
      REDRIVE_HEADERS.redriveId,
      REDRIVE_HEADERS.replayId,
      REDRIVE_HEADERS.redriveCount,
    ]);
  });

  it("keeps a message id that is not valid UTF-8 as the original message id, byte for byte", () => {
    const id = Buffer.from([0x6d, 0xff, 0x2d, 0x31]);
    const out = rebuildProperties(props({ messageId: id }), { ...markers, originalMessageId: id });
    const p = parseProperties(out);
    expect(p.fields.get(0x0080)!.equals(sstr(id))).toBe(true);
    const orig = tableEntries(p.fields.get(0x2000)!.subarray(4)).find(
      (x) => x.name === REDRIVE_HEADERS.originalMessageId,
    )!;
    expect(orig.bytes.subarray(orig.bytes.length - 4).equals(id)).toBe(true);
  });

  it("refuses malformed properties and tables instead of guessing", () => {
    expect(() => parseProperties(Buffer.from([0x80, 0x00, 5, 0x61]))).toThrow(RangeError);
    expect(() => parseProperties(Buffer.from([0x00, 0x01]))).toThrow(/continuation/);
    expect(() => tableEntries(e("x", "Z", Buffer.alloc(0)))).toThrow(/unknown field type/);
    expect(() => tableEntries(e("x", "S", u32(9)))).toThrow(RangeError);
  });
});

describe("redriveProperties: the one-pass copy a redrive without a repair uses", () => {
  const dup = Buffer.concat([
    int32Entry(REDRIVE_HEADERS.redriveCount, 3),
    longstrEntry(REDRIVE_HEADERS.originalMessageId, "first"),
    e("x-app", "S", Buffer.concat([u32(1), Buffer.from("a")])),
    int32Entry(REDRIVE_HEADERS.redriveCount, 4), // a repeated marker: one value is kept
    longstrEntry(REDRIVE_HEADERS.originalMessageId, "again"), // a repeated original id: kept as it was
    longstrEntry(REDRIVE_HEADERS.replayId, "old-replay"),
    e("x-dlq-redrive-i", "t", Buffer.from([1])), // a name one byte short of a marker's
  ]);
  const cases: Array<[string, Buffer]> = [
    [
      "exotic table, message id, timestamp",
      props({ table: exoticTable, messageId: "m-1", deliveryMode: 1, timestamp: 1n }),
    ],
    ["markers already there, repeated", props({ table: dup, messageId: "second" })],
    ["no table, no delivery mode, no message id", props({})],
    ["an empty message id", props({ table: exoticTable, messageId: "" })],
    ["a message id that is not UTF-8", props({ messageId: Buffer.from([0x6d, 0xff]) })],
    ["the publishing user's user-id", props({ table: dup, userId: "guest", deliveryMode: 2 })],
    ["an empty table", props({ table: Buffer.alloc(0) })],
  ];
  it.each(cases)("writes what rebuildProperties writes: %s", (_name, raw) => {
    for (const originalMessageId of ["m-req", null]) {
      for (const m of [
        { ...markers, originalMessageId },
        { redriveId: "job-ü", replayId: "r-\u00e9-2", redriveCount: 70000, originalMessageId },
      ]) {
        const parsed = parseProperties(raw);
        const own = shortstrOf(parsed, 0x0080);
        const expected = rebuildProperties(raw, {
          ...m,
          originalMessageId: own && own.length > 0 ? own : m.originalMessageId,
        });
        expect(redriveProperties(raw, m, "guest").equals(expected)).toBe(true);
      }
    }
  });

  it("refuses another user's user-id, and malformed properties, as the checks before it did", () => {
    expect(() => redriveProperties(props({ userId: "alice" }), markers, "guest")).toThrow(UserIdRefused);
    expect(() => redriveProperties(Buffer.from([0x80, 0x00, 5, 0x61]), markers, "guest")).toThrow(RangeError);
    expect(() => redriveProperties(Buffer.from([0x00, 0x01]), markers, "guest")).toThrow(/continuation/);
    expect(() => redriveProperties(props({ table: e("x", "Z", Buffer.alloc(0)) }), markers, "guest")).toThrow(
      /unknown field type/,
    );
    expect(() => redriveProperties(props({ table: e("x", "S", u32(9)) }), markers, "guest")).toThrow(RangeError);
  });
});

describe("publish frames", () => {
  it("basic.publish method frame and content header frame", () => {
    const m = publishMethodFrame(3, "ex", "rk", true);
    expect(m.toString("hex")).toBe(
      ["01", "0003", "0000000d", "003c", "0028", "0000", "026578", "02726b", "01", "ce"].join(""),
    );
    const h = contentHeaderFrame(3, 5, Buffer.from([0x00, 0x00]));
    expect(h.toString("hex")).toBe(
      ["02", "0003", "0000000e", "003c", "0000", "0000000000000005", "0000", "ce"].join(""),
    );
  });

  it("writes the method, header and body frames into one buffer, byte for byte as the frames apart", () => {
    const props = Buffer.from([0x10, 0x00, 0x02, 0x69, 0x64]);
    const body = Buffer.from("hello");
    const bodyFrame = Buffer.concat([Buffer.from("0300070000000568656c6c6f", "hex"), Buffer.from([0xce])]);
    for (const [ex, rk] of [
      ["", "queue.é"],
      ["ex", "rk"],
    ]) {
      const apart = [publishMethodFrame(7, ex, rk, true), contentHeaderFrame(7, body.length, props)];
      expect(
        publishFrames(7, ex, rk, true, body.length, props, body).equals(Buffer.concat([...apart, bodyFrame])),
      ).toBe(true);
      expect(publishFrames(7, ex, rk, true, body.length, props, null).equals(Buffer.concat(apart))).toBe(true);
    }
    expect(() => publishFrames(1, "x".repeat(256), "rk", true, 0, props, null)).toThrow(RangeError);
  });
});

describe("origin routes", () => {
  const msg = (table: Buffer): ConsumeMessage => {
    const raw = props({ table });
    const properties = { headers: {} } as unknown as ConsumeMessage["properties"];
    Object.defineProperty(properties, RAW_HEADERS, { value: raw });
    return { content: Buffer.from("x"), fields: {} as ConsumeMessage["fields"], properties };
  };
  const str = (name: string, v: string) => e(name, "S", Buffer.concat([u32(Buffer.byteLength(v)), Buffer.from(v)]));
  const death = (queue: string, exchange: string, keys: string[]) => {
    const ks = Buffer.concat(keys.map((k) => Buffer.concat([Buffer.from("S"), u32(k.length), Buffer.from(k)])));
    const t = Buffer.concat([
      str("queue", queue),
      str("reason", "rejected"),
      str("exchange", exchange),
      e("routing-keys", "A", Buffer.concat([u32(ks.length), ks])),
    ]);
    return Buffer.concat([Buffer.from("F"), u32(t.length), t]);
  };

  it("x-death[0]: straight to the queue it last died in, never through its exchange (no fan-out copies)", () => {
    const arr = Buffer.concat([death("hop2", "", ["hop2"]), death("orders", "orders.x", ["orders", "cc"])]);
    const r = originRoute(msg(e("x-death", "A", Buffer.concat([u32(arr.length), arr]))), "configured");
    expect(r).toEqual({ exchange: "", routingKey: "hop2", words: describeRoute("", "hop2") });
    const arr2 = death("orders-work", "orders.fanout", ["ignored-by-fanout"]);
    expect(originRoute(msg(e("x-death", "A", Buffer.concat([u32(arr2.length), arr2]))), null)).toMatchObject({
      exchange: "",
      routingKey: "orders-work",
      words: describeRoute("", "orders-work"),
    });
  });

  it("a Spring-republished failure (no x-death) goes back through its x-original exchange and routing key", () => {
    const h = Buffer.concat([str("x-original-exchange", "orders.x"), str("x-original-routingKey", "orders")]);
    expect(originRoute(msg(h), "cfg")).toMatchObject({
      exchange: "orders.x",
      routingKey: "orders",
      words: 'exchange "orders.x", routing key "orders"',
    });
  });

  it("falls back to x-first-death-queue, then the configured origin, else a clear reason", () => {
    expect(originRoute(msg(str("x-first-death-queue", "work")), "cfg")).toMatchObject({
      exchange: "",
      routingKey: "work",
    });
    expect(originRoute(msg(str("x-app", "a")), "cfg")).toMatchObject({ exchange: "", routingKey: "cfg" });
    const none = originRoute(msg(str("x-app", "a")), null);
    expect("error" in none && none.error).toMatch(/cannot be derived.*explicitly/);
  });
});

describe("the queue a route names (MoveResult.target)", () => {
  it("is the routing key through the default exchange, and none through another exchange", () => {
    expect(routeQueue({ exchange: "", routingKey: "orders", words: describeRoute("", "orders") })).toBe("orders");
    expect(routeQueue({ exchange: "orders.x", routingKey: "orders", words: "" })).toBeNull();
  });
});

describe("twins", () => {
  it("share the id without its occurrence suffix", () => {
    expect(twinOf("k-abc")).toBe("k-abc");
    expect(twinOf("k-abc~2")).toBe("k-abc");
    expect(twinOf("k-abc~13")).toBe("k-abc");
    expect(twinOf("m-b3JkZXI~2")).toBe("m-b3JkZXI");
    // Only a trailing occurrence number is a suffix.
    expect(twinOf("k-a~2b")).toBe("k-a~2b");
    expect(twinOf("k-abc~0")).toBe("k-abc~0");
  });

  it("answer a request for one another in the shared request book, by id first, then by content", () => {
    const book = new RequestBook(
      [
        { letterId: "k-X~2", sha256: "AB" },
        { letterId: "k-Y", sha256: "cd" },
        { letterId: "k-X~2", sha256: "ab" },
      ],
      twinOf,
    );
    expect(book.size).toBe(2); // a repeated id is one request
    expect(book.take({ letterId: "k-Z", sha256: "ab" })).toBeNull();
    expect(book.take({ letterId: "k-X", sha256: "ff" })).toBeNull(); // another content is not a twin
    expect(book.take({ letterId: "k-X", sha256: "ab" })).toEqual({ letterId: "k-X~2", sha256: "AB" });
    expect(book.take({ letterId: "k-X~2", sha256: "ab" })).toBeNull(); // answered once
    expect(book.pending().map((r) => r.letterId)).toEqual(["k-Y"]);
  });
});
