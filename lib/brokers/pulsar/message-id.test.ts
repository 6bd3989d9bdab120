// Pulsar message ids and cursor positions as the real 4.0.7 broker gives them: the WebSocket API's
// base64 MessageIdData, internal stats' "ledger:entry" positions and acknowledged ranges.
import { describe, expect, it } from "vitest";
import {
  AckState,
  comparePositions,
  decodeMessageId,
  encodeMessageId,
  letterIdOf,
  messageIdText,
  parseAckedRanges,
  parsePosition,
  positionOfLetterId,
  type MessageId,
} from "@/lib/brokers/pulsar/message-id";

const pos = (ledger: number | bigint, entry: number | bigint) => ({ ledger: BigInt(ledger), entry: BigInt(entry) });
const b64 = (bytes: number[]) => Buffer.from(bytes).toString("base64");

describe("decodeMessageId", () => {
  it("decodes ids seen on the broker's WebSocket API", () => {
    expect(decodeMessageId("CAgQADAA")).toEqual({ ledger: 8n, entry: 0n, partition: -1, batchIndex: -1, batchSize: 0 });
    expect(decodeMessageId("CAwQATAA")).toEqual({
      ledger: 12n,
      entry: 1n,
      partition: -1,
      batchIndex: -1,
      batchSize: 0,
    });
    expect(messageIdText(decodeMessageId("CAgQADAA"))).toBe("8:0:-1");
  });

  it("decodes a message of a batched entry on a partition: partition, batch index and size", () => {
    // ledger 12, entry 1, partition 3, batch_index 2, batch_size 5
    const id = decodeMessageId(b64([0x08, 0x0c, 0x10, 0x01, 0x18, 0x03, 0x20, 0x02, 0x30, 0x05]));
    expect(id).toEqual({ ledger: 12n, entry: 1n, partition: 3, batchIndex: 2, batchSize: 5 });
    expect(messageIdText(id)).toBe("12:1:3:2");
    expect(letterIdOf(id)).toBe("12-1-2");
  });

  it("skips fields it does not know (ack_set, length-delimited and fixed-width fields)", () => {
    // ledger 7, entry 9, ack_set (field 5, varint) 255, an unknown bytes field 9, a fixed64 field 10
    const id = decodeMessageId(
      b64([0x08, 0x07, 0x10, 0x09, 0x28, 0xff, 0x01, 0x4a, 0x02, 0xaa, 0xbb, 0x51, 1, 2, 3, 4, 5, 6, 7, 8]),
    );
    expect(id).toMatchObject({ ledger: 7n, entry: 9n, batchIndex: -1 });
  });

  it("refuses bytes that are not a MessageIdData", () => {
    expect(() => decodeMessageId("")).toThrow(/without ledger and entry/);
    expect(() => decodeMessageId(b64([0x08, 0x07]))).toThrow(/without ledger and entry/); // no entry
    expect(() => decodeMessageId(b64([0x10, 0x07]))).toThrow(/without ledger and entry/); // no ledger
    expect(() => decodeMessageId(b64([0x08, 0x80]))).toThrow(/truncated varint/);
    expect(() => decodeMessageId(b64([0x08, 0x01, 0x10, 0x01, 0x0b]))).toThrow(/wire type 3/);
  });
});

describe("encodeMessageId", () => {
  it("gives the broker's own bytes for a plain position", () => {
    expect(encodeMessageId(pos(8, 0))).toBe("CAgQAA==");
    expect(decodeMessageId(encodeMessageId(pos(12, 1)))).toMatchObject({
      ledger: 12n,
      entry: 1n,
      partition: -1,
      batchIndex: -1,
    });
  });

  it("round-trips an empty ledger's mark-delete position 12:-1 (entry -1 as a 10-byte varint)", () => {
    const encoded = encodeMessageId(pos(12, -1));
    expect(Buffer.from(encoded, "base64")).toHaveLength(2 + 1 + 10);
    expect(decodeMessageId(encoded)).toMatchObject({ ledger: 12n, entry: -1n });
    expect(decodeMessageId(encodeMessageId(pos(-1, -1)))).toMatchObject({ ledger: -1n, entry: -1n });
  });

  it("round-trips ledgers and entries beyond 2^32 and up to 2^63 - 1 exactly", () => {
    for (const p of [pos(2n ** 32n + 5n, 3), pos(2n ** 40n, 2n ** 33n + 1n), pos(2n ** 63n - 1n, 0)]) {
      expect(decodeMessageId(encodeMessageId(p))).toMatchObject(p);
    }
  });

  it("round-trips a partition and a batch index; none is written when they are -1", () => {
    expect(decodeMessageId(encodeMessageId({ ...pos(5, 6), partition: 2, batchIndex: 4 }))).toMatchObject({
      ledger: 5n,
      entry: 6n,
      partition: 2,
      batchIndex: 4,
    });
    expect(encodeMessageId({ ...pos(5, 6), partition: -1, batchIndex: -1 })).toBe(encodeMessageId(pos(5, 6)));
  });
});

describe("positions", () => {
  it("parses 'ledger:entry' and orders by ledger, then entry", () => {
    expect(parsePosition("12:-1")).toEqual(pos(12, -1));
    expect(parsePosition(" 3:4 ")).toEqual(pos(3, 4));
    for (const junk of ["", null, undefined, "12", "12:1:0", "a:b", "12-1"]) expect(parsePosition(junk)).toBeNull();
    expect(comparePositions(pos(12, 100), pos(13, 0))).toBe(-1);
    expect(comparePositions(pos(13, 0), pos(12, 100))).toBe(1);
    expect(comparePositions(pos(12, -1), pos(12, 0))).toBe(-1);
    expect(comparePositions(pos(2n ** 40n, 1), pos(2n ** 40n, 1))).toBe(0);
  });

  it("parses internal stats' acknowledged ranges", () => {
    expect(parseAckedRanges("[(12:0..12:2], (14:3..14:9]]")).toEqual([
      { from: pos(12, 0), to: pos(12, 2) },
      { from: pos(14, 3), to: pos(14, 9) },
    ]);
    expect(parseAckedRanges("[]")).toEqual([]);
    expect(parseAckedRanges(undefined)).toEqual([]);
    expect(parseAckedRanges("[(12:-1..13:4]]")).toEqual([{ from: pos(12, -1), to: pos(13, 4) }]);
  });
});

describe("AckState", () => {
  it("acknowledges everything up to the mark-delete position and each range open below, closed above", () => {
    const acks = new AckState(pos(12, 2), parseAckedRanges("[(14:3..14:9], (12:4..12:6]]")); // out of order on purpose
    const acked = (l: number, e: number) => acks.isAcked(pos(l, e));
    expect([acked(11, 99), acked(12, 0), acked(12, 2)]).toEqual([true, true, true]);
    expect(acked(12, 3)).toBe(false);
    expect(acked(12, 4)).toBe(false); // the lower edge is open
    expect([acked(12, 5), acked(12, 6)]).toEqual([true, true]); // the upper edge is closed
    expect([acked(12, 7), acked(13, 0)]).toEqual([false, false]);
    expect([acked(14, 3), acked(14, 4), acked(14, 9), acked(14, 10), acked(15, 0)]).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
  });

  it("with an empty ledger's mark-delete position 12:-1: nothing of ledger 12 is acknowledged", () => {
    const acks = new AckState(pos(12, -1), []);
    expect(acks.isAcked(pos(11, 7))).toBe(true);
    expect(acks.isAcked(pos(12, -1))).toBe(true);
    expect(acks.isAcked(pos(12, 0))).toBe(false);
  });

  it("with no subscription (-1:-1) acknowledges nothing but its ranges, across ledgers", () => {
    const acks = new AckState(pos(-1, -1), parseAckedRanges("[(12:5..14:2]]"));
    expect(acks.isAcked(pos(8, 0))).toBe(false);
    expect(acks.isAcked(pos(12, 5))).toBe(false);
    expect(acks.isAcked(pos(13, 1000))).toBe(true);
    expect(acks.isAcked(pos(14, 2))).toBe(true);
    expect(acks.isAcked(pos(14, 3))).toBe(false);
  });

  it("agrees with a linear check over many ranges", () => {
    const ranges = Array.from({ length: 50 }, (_, i) => ({ from: pos(20, i * 10), to: pos(20, i * 10 + 3) }));
    const acks = new AckState(pos(19, 5), ranges);
    for (let e = -1; e < 510; e++) {
      const p = pos(20, e);
      const linear = ranges.some((r) => comparePositions(p, r.from) > 0 && comparePositions(p, r.to) <= 0);
      expect(acks.isAcked(p), `20:${e}`).toBe(linear);
    }
  });
});

describe("letter ids", () => {
  const id = (over: Partial<MessageId>): MessageId => ({
    ledger: 8n,
    entry: 0n,
    partition: -1,
    batchIndex: -1,
    batchSize: 0,
    ...over,
  });

  it("round-trips through positionOfLetterId, batched or not, 64-bit exact", () => {
    expect(letterIdOf(decodeMessageId("CAgQADAA"))).toBe("8-0");
    expect(positionOfLetterId("8-0")).toEqual({ ledger: 8n, entry: 0n, batchIndex: -1 });
    const big = id({ ledger: 2n ** 40n + 1n, entry: 2n ** 33n, batchIndex: 3, batchSize: 4 });
    expect(letterIdOf(big)).toBe(`${2n ** 40n + 1n}-${2n ** 33n}-3`);
    expect(positionOfLetterId(letterIdOf(big))).toEqual({ ledger: big.ledger, entry: big.entry, batchIndex: 3 });
  });

  it("names a message of a one-message entry without a batch index, whatever the partition", () => {
    expect(letterIdOf(id({ partition: 2 }))).toBe("8-0");
    expect(letterIdOf(id({ batchIndex: 0, batchSize: 0 }))).toBe("8-0");
  });

  it("rejects ids that are not ours", () => {
    for (const junk of [
      "",
      "8",
      "8:0",
      "8:0:-1",
      "-1-0",
      "8--1",
      "8-0-",
      "8-0-1-2",
      "a-b",
      "8-0x",
      "../8-0",
      "8-0\n",
      " 8-0",
    ]) {
      expect(positionOfLetterId(junk), JSON.stringify(junk)).toBeNull();
    }
  });
});
