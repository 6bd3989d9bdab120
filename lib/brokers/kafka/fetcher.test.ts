import { describe, expect, it } from "vitest";
import { bytesValue } from "@/lib/brokers/display";
import { committedRecords, recordsInRange } from "@/lib/brokers/kafka/fetcher";
import { bytesValueOf } from "@/lib/brokers/kafka/headers";
import type { InternalRecord } from "@/lib/brokers/kafka/client";

const rec = (offset: number, over: Partial<InternalRecord> = {}): InternalRecord => ({
  offset: String(offset),
  timestamp: "0",
  key: null,
  value: Buffer.from("v"),
  ...over,
});

describe("read_committed filtering and ranges", () => {
  it("drops control records without aborted transactions, keeping the array when there are none", () => {
    const plain = [rec(0), rec(1)];
    expect(committedRecords({ messages: plain })).toBe(plain);
    const withMarker = [rec(0), rec(1, { isControlRecord: true, key: Buffer.from([0, 0, 0, 1]) }), rec(2)];
    expect(committedRecords({ messages: withMarker, abortedTransactions: [] }).map((r) => r.offset)).toEqual([
      "0",
      "2",
    ]);
  });

  it("drops an aborted transaction's records up to its abort marker", () => {
    const tx = { producerId: "7", inTransaction: true };
    const messages = [
      rec(0),
      rec(1, { batchContext: tx }),
      rec(2, { batchContext: tx }),
      rec(3, { isControlRecord: true, key: Buffer.from([0, 0, 0, 0]), batchContext: tx }),
      rec(4, { batchContext: tx }),
    ];
    expect(
      committedRecords({ messages, abortedTransactions: [{ producerId: "7", firstOffset: "1" }] }).map((r) => r.offset),
    ).toEqual(["0", "4"]);
  });

  it("keeps [from, to) of a batch that starts before the asked offset", () => {
    const rs = [rec(5), rec(6), rec(7), rec(8)];
    expect(recordsInRange(rs, 6n, 8n).map((r) => r.offset)).toEqual(["6", "7"]);
    expect(recordsInRange(rs, 0n, 100n)).toBe(rs);
    expect(recordsInRange(rs, 9n, 100n)).toEqual([]);
  });

  it("bytesValueOf is display's bytesValue (BOM, invalid UTF-8, surrogates, empty)", () => {
    for (const bytes of [
      [],
      [0x41],
      [0xef, 0xbb, 0xbf, 0x41],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xff, 0xfe],
      [0x41, 0, 0x42],
      [0xf0, 0x9f, 0x98, 0x80],
    ]) {
      expect(bytesValueOf(Buffer.from(bytes))).toEqual(bytesValue(Buffer.from(bytes)));
      expect(bytesValueOf(new Uint8Array(bytes))).toEqual(bytesValue(new Uint8Array(bytes)));
    }
  });
});
