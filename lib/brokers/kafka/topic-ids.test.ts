import { describe, expect, it } from "vitest";
import { decodeMetadataResponse, encodeMetadataRequest, fetchTopicIds } from "./topic-ids";
import { markApplies } from "./handled-store";

/** A Metadata v12 response body (after the correlation id), written field by field. */
function response(topics: Array<{ name: string; id: string | null; error?: number; partitions?: number }>): Buffer {
  const b: number[] = [];
  // Each helper returns one field's bytes; put appends a struct's fields in order, one struct a line.
  const put = (...fields: number[][]) => {
    for (const f of fields) b.push(...f);
  };
  const u8 = (n: number) => [n];
  const i16 = (n: number) => [(n >> 8) & 255, n & 255];
  const i32 = (n: number) => [(n >>> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255];
  const str = (s: string | null) => (s === null ? [0] : [Buffer.byteLength(s) + 1, ...Buffer.from(s)]);
  put(u8(0)); // header tags
  put(i32(0)); // throttle
  put(u8(2)); // one broker
  put(i32(1), str("127.0.0.1"), i32(9092), str(null), u8(0));
  put(str("cluster-1"), i32(1));
  put(u8(topics.length + 1));
  for (const t of topics) {
    put(i16(t.error ?? 0), str(t.name));
    put([...Buffer.from((t.id ?? "0".repeat(32)).replace(/-/g, ""), "hex")]);
    put(u8(0)); // is_internal
    put(u8((t.partitions ?? 1) + 1));
    for (let p = 0; p < (t.partitions ?? 1); p++) {
      put(i16(0), i32(p), i32(1), i32(0));
      put(u8(2), i32(1), u8(2), i32(1), u8(1), u8(0));
    }
    put(i32(0), u8(0));
  }
  put(u8(0));
  return Buffer.from(b);
}

describe("topic ids over Metadata v10-12", () => {
  it("reads each topic's id, null for an all-zero id, and the error code", () => {
    const id = "be1dad87-d35b-4841-8379-139770ec62ec";
    expect(
      decodeMetadataResponse(
        response([
          { name: "a.DLT", id, partitions: 3 },
          { name: "old", id: null },
          { name: "gone", id: null, error: 3 },
        ]),
      ),
    ).toEqual([
      { name: "a.DLT", topicId: id, errorCode: 0 },
      { name: "old", topicId: null, errorCode: 0 },
      { name: "gone", topicId: null, errorCode: 3 },
    ]);
  });

  it("asks by name, with the v10-only field only in v10", () => {
    expect(encodeMetadataRequest(12, ["ab"]).toString("hex")).toBe(`0002${"00".repeat(16)}03616200000000`);
    expect(encodeMetadataRequest(10, ["ab"]).length).toBe(encodeMetadataRequest(12, ["ab"]).length + 1);
  });

  it("answers null (no ids) without asking a broker that has no Metadata v10", async () => {
    const broker = {
      versions: { 3: { minVersion: 0, maxVersion: 9 } },
      connectionPool: { send: async () => Promise.reject(new Error("not sent")) },
    };
    expect([...(await fetchTopicIds(broker, ["t"]))]).toEqual([["t", null]]);
  });
});

describe("markApplies", () => {
  const at = new Date("2026-12-01T10:00:00Z");
  it("a mark of the current id always counts; a legacy one only for a record no younger than the mark", () => {
    expect(markApplies({ at, outcome: "redriven", operationId: "x" }, at.getTime() + 60_000)).toBe(true);
    expect(markApplies({ at, outcome: "redriven", operationId: "x", legacy: true }, at.getTime() - 1)).toBe(true);
    expect(markApplies({ at, outcome: "redriven", operationId: "x", legacy: true }, at.getTime() + 1)).toBe(false);
    expect(markApplies({ at, outcome: "redriven", operationId: "x", legacy: true }, "-1")).toBe(false);
    expect(markApplies(undefined, 0)).toBe(false);
  });
});
