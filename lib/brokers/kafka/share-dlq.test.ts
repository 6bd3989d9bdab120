import { describe, expect, it } from "vitest";
import { decodeHeaders, failureFromHeaders, originOf, type RawHeader } from "@/lib/brokers/kafka/headers";
import { toLetter } from "@/lib/brokers/kafka/letter";
import { joinOriginal, originalRef, shareFailureOf } from "@/lib/brokers/kafka/share-dlq";

const utf8 = (s: string) => Buffer.from(s, "utf8");

// As Kafka 4.4.0's share partition writes them (UTF-8 text), for a record rejected by the client.
const raw: RawHeader[] = [
  ["__dlq.errors.topic", utf8("orders")],
  ["__dlq.errors.partition", utf8("2")],
  ["__dlq.errors.offset", utf8("9223372036854775806")],
  ["__dlq.errors.group", utf8("billing")],
  ["__dlq.errors.delivery.count", utf8("1")],
  ["__dlq.errors.message", utf8("Offset rejected by client.")],
];
const kafkajsHeaders = Object.fromEntries(raw);

describe("share-group dead letters (__dlq.errors.*, KIP-1191)", () => {
  const headers = decodeHeaders(raw);

  it("gives the origin, the group and the failure fields", () => {
    expect(originOf(headers)).toEqual({
      convention: "share",
      topic: "orders",
      partition: "2",
      offset: "9223372036854775806",
      group: "billing",
    });
    const f = failureFromHeaders(headers, 1_700_000_000_000, "configured-origin");
    expect(f).toMatchObject({
      reason: "rejected",
      exceptionMessage: "Offset rejected by client.",
      deliveryCount: 1,
      originQueue: "orders",
      exceptionClass: null,
      deadLetteredAt: "2023-11-14T22:13:20.000Z",
    });
  });

  it("names the delivery-limit reason and keeps an unknown message as it is", () => {
    const limit = decodeHeaders([
      ...raw.slice(0, 4),
      ["__dlq.errors.delivery.count", utf8("5")],
      ["__dlq.errors.message", utf8("Offset delivery count exceeded the threshold.")],
    ]);
    expect(shareFailureOf(limit)).toMatchObject({ reason: "delivery_limit", deliveryCount: 5 });
    const other = decodeHeaders([...raw.slice(0, 5), ["__dlq.errors.message", utf8("Something new.")]]);
    expect(failureFromHeaders(other, null, null)).toMatchObject({
      reason: "Something new.",
      exceptionMessage: "Something new.",
    });
  });

  it("wins over Spring, Connect and Streams headers on the same record", () => {
    const mixed = decodeHeaders([
      ["kafka_dlt-original-topic", utf8("elsewhere")],
      ["__connect.errors.topic", utf8("x")],
      ...raw,
    ]);
    expect(originOf(mixed).convention).toBe("share");
    expect(originOf(mixed).topic).toBe("orders");
    // Spring still wins over Connect when no share header is present (in either order).
    expect(
      originOf(
        decodeHeaders([
          ["__connect.errors.topic", utf8("c")],
          ["kafka_dlt-original-topic", utf8("s")],
        ]),
      ),
    ).toMatchObject({ convention: "spring", topic: "s" });
  });

  it("a metadata-only record is a letter that says where the original is, not a tombstone", () => {
    const l = toLetter(
      "dlq.orders",
      0,
      { offset: "7", timestamp: "1700000000000", key: null, value: null, headers: kafkajsHeaders },
      0,
      { configOrigin: null },
    );
    const prop = (n: string) => l.properties.find((p) => p.name === n)?.value;
    expect(prop("tombstone")).toBeUndefined();
    expect(prop("record data")).toMatchObject({ t: "string" });
    expect(prop("original topic")).toEqual({ t: "string", v: "orders" });
    expect(prop("original partition")).toEqual({ t: "number", v: "2" });
    expect(prop("original offset")).toEqual({ t: "number", v: "9223372036854775806" });
    expect(prop("share group")).toEqual({ t: "string", v: "billing" });
    expect(prop("delivery count")).toEqual({ t: "number", v: "1" });
    expect(l.failure).toMatchObject({ reason: "rejected", deliveryCount: 1, originQueue: "orders" });
    expect(l.history[0]).toMatchObject({ queue: "orders", reason: "rejected", count: 1 });
    expect(l.bodySize).toBe(0);
  });

  it("finds the original's place from raw headers, and refuses incomplete ones", () => {
    expect(originalRef(kafkajsHeaders)).toEqual({ topic: "orders", partition: 2, offset: 9223372036854775806n });
    expect(originalRef({ ...kafkajsHeaders, "__dlq.errors.offset": utf8("-1") })).toBeNull();
    expect(originalRef({ "kafka_dlt-original-topic": utf8("orders") })).toBeNull();
  });
});

describe("joinOriginal", () => {
  const original = { offset: "3", timestamp: "1000", key: utf8("k"), value: utf8("v"), headers: { trace: utf8("t1") } };

  it("takes the original's key, value and headers while it is retained", () => {
    expect(joinOriginal({ timestamp: "2000", key: null, value: null }, { kind: "found", record: original })).toEqual({
      data: { key: original.key, value: original.value, headers: original.headers },
      original: true,
    });
    expect(
      joinOriginal({ timestamp: "2000", key: utf8("k"), value: utf8("v") }, { kind: "found", record: original }),
    ).toMatchObject({ original: true });
  });

  it("a metadata-only letter without its original has no data", () => {
    expect(
      joinOriginal({ timestamp: "2000", key: null, value: null }, { kind: "gone", why: "deleted by retention" }),
    ).toEqual({ data: null, why: "deleted by retention" });
    // A younger record at that offset is another record (the topic was created again).
    expect(
      joinOriginal({ timestamp: "500", key: null, value: null }, { kind: "found", record: original }),
    ).toMatchObject({ data: null });
  });

  it("a copied letter without its original keeps its copy, without headers", () => {
    expect(
      joinOriginal({ timestamp: "2000", key: utf8("k"), value: utf8("other") }, { kind: "found", record: original }),
    ).toMatchObject({ original: false, data: { key: utf8("k"), value: utf8("other"), headers: {} } });
    expect(
      joinOriginal({ timestamp: "2000", key: null, value: utf8("v") }, { kind: "gone", why: "gone" }),
    ).toMatchObject({ original: false, data: { value: utf8("v"), headers: {} } });
  });
});
