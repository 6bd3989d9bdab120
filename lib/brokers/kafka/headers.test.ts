import { describe, expect, it } from "vitest";
import { timestampValue } from "@/lib/brokers/display";
import {
  bigEndianInt,
  decodeHeaders,
  decodeHeaderValue,
  isoOfMs,
  failureFromHeaders,
  originOf,
  rawHeadersFromKafkajs,
  type RawHeader,
} from "@/lib/brokers/kafka/headers";
import { topicGlob, matchDeadLetterTopics, parseLetterId } from "@/lib/brokers/kafka/discovery";
import { planPage } from "@/lib/brokers/kafka/paging";
import { retentionWarnings } from "@/lib/brokers/kafka/retention";

const bytes = (...b: number[]) => Uint8Array.from(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

describe("Spring kafka_dlt-* headers (byte-exact)", () => {
  // As DeadLetterPublishingRecoverer writes them: partition int32 BE, offset and timestamp int64 BE.
  const raw: RawHeader[] = [
    ["kafka_dlt-original-topic", utf8("orders")],
    ["kafka_dlt-original-partition", bytes(0x00, 0x00, 0x00, 0x03)],
    ["kafka_dlt-original-offset", bytes(0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe)],
    ["kafka_dlt-original-timestamp", bytes(0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00)],
    ["kafka_dlt-original-timestamp-type", utf8("CreateTime")],
    ["kafka_dlt-original-consumer-group", utf8("orders-app")],
    ["kafka_dlt-exception-fqcn", utf8("org.springframework.kafka.listener.ListenerExecutionFailedException")],
    ["kafka_dlt-exception-cause-fqcn", utf8("java.lang.IllegalStateException")],
    ["kafka_dlt-exception-message", utf8("Listener failed; Ünïcödé 💥")],
    ["kafka_dlt-exception-stacktrace", utf8("java.lang.IllegalStateException: boom\n\tat A.b(A.java:1)")],
  ];
  const headers = decodeHeaders(raw);

  it("decodes binary partition, 64-bit offset (exact) and timestamp", () => {
    expect(headers[1].value).toEqual({ t: "number", v: "3" });
    expect(headers[2].value).toEqual({ t: "number", v: "9223372036854775806" });
    expect(headers[3].value).toEqual({ t: "timestamp", v: new Date(0x018bcfe56800).toISOString() });
    expect(headers[0].value).toMatchObject({ t: "bytes", text: "orders", size: 6 });
  });

  it("fills FailureInfo and the origin", () => {
    const f = failureFromHeaders(headers, 1_700_000_000_000, null);
    // The cause, not Spring's wrapper; its message from the stack trace, since Spring writes none for it.
    expect(f.exceptionClass).toBe("java.lang.IllegalStateException");
    expect(f.wrapperClass).toBe("org.springframework.kafka.listener.ListenerExecutionFailedException");
    expect(f.exceptionMessage).toBe("boom");
    expect(f.reason).toBe("listener failed");
    expect(f.stackTrace).toContain("\tat A.b(A.java:1)");
    expect(f.originQueue).toBe("orders");
    expect(f.deadLetteredAt).toBe("2023-11-14T22:13:20.000Z");
    expect(originOf(headers)).toEqual({
      convention: "spring",
      topic: "orders",
      partition: "3",
      offset: "9223372036854775806",
      group: "orders-app",
    });
  });

  it("original timestamps read between other timestamps (the cache of the last two) are each one's own, as display writes them", () => {
    const int64 = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(n);
      return b;
    };
    const values = [
      1_700_000_000_000n,
      1_700_000_000_001n,
      0n,
      -1n,
      8_640_000_000_000_001n,
      9_223_372_036_854_775_807n,
    ];
    for (const a of values)
      for (const b of values) {
        expect(decodeHeaderValue("kafka_dlt-original-timestamp", int64(a))).toEqual(timestampValue(a));
        const d = new Date(Number(b));
        expect(isoOfMs(Number(b))).toBe(Number.isFinite(d.getTime()) ? d.toISOString() : null);
        expect(decodeHeaderValue("kafka_dlt-original-timestamp", int64(a))).toEqual(timestampValue(a));
      }
  });

  it("offsets and timestamps read as the exact int64, around and beyond a double's exact integers", () => {
    const int64Bytes = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(n);
      return Uint8Array.from(b);
    };
    const edges = [0n, 1n, -1n, 2n ** 32n - 1n, 2n ** 32n, -(2n ** 32n), 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n];
    const values = [...edges, ...edges.map((n) => -n), 2n ** 63n - 1n, -(2n ** 63n), 8_640_000_000_000_001n];
    for (const n of values) {
      expect(decodeHeaderValue("kafka_dlt-original-offset", int64Bytes(n))).toEqual({ t: "number", v: n.toString() });
      expect(decodeHeaderValue("kafka_dlt-original-timestamp", int64Bytes(n))).toEqual(timestampValue(n));
    }
  });

  it("negative values and wrong widths are never guessed", () => {
    expect(bigEndianInt(bytes(0xff, 0xff, 0xff, 0xff), 4)).toBe(-1n);
    expect(bigEndianInt(bytes(0, 0, 3), 4)).toBeNull();
    // A text-encoded offset (some hand-written publishers) stays as the bytes it is.
    const [h] = decodeHeaders([["kafka_dlt-original-offset", utf8("42")]]);
    expect(h.value).toEqual({ t: "bytes", v: Buffer.from("42").toString("base64"), size: 2, text: "42" });
  });

  it("uses the last exception header when Spring kept earlier ones", () => {
    const h = decodeHeaders([
      ["kafka_dlt-exception-fqcn", utf8("first.Exception")],
      ["kafka_dlt-exception-fqcn", utf8("second.Exception")],
    ]);
    expect(failureFromHeaders(h, null, null).exceptionClass).toBe("second.Exception");
  });
});

describe("Kafka Connect __connect.errors.* headers (byte-exact)", () => {
  const raw: RawHeader[] = [
    ["__connect.errors.topic", utf8("payments")],
    ["__connect.errors.partition", utf8("2")],
    ["__connect.errors.offset", utf8("1234567890123")],
    ["__connect.errors.connector.name", utf8("jdbc-sink")],
    ["__connect.errors.task.id", utf8("1")],
    ["__connect.errors.stage", utf8("VALUE_CONVERTER")],
    ["__connect.errors.class.name", utf8("org.apache.kafka.connect.json.JsonConverter")],
    ["__connect.errors.exception.class.name", utf8("org.apache.kafka.connect.errors.DataException")],
    ["__connect.errors.exception.message", utf8("Converting byte[] to Kafka Connect data failed")],
    ["__connect.errors.exception.stacktrace", utf8("org.apache.kafka.connect.errors.DataException: ...")],
  ];
  it("decodes text partition/offset, connector and stage", () => {
    const h = decodeHeaders(raw);
    const f = failureFromHeaders(h, 0, null);
    expect(f.exceptionClass).toBe("org.apache.kafka.connect.errors.DataException");
    expect(f.originQueue).toBe("payments");
    expect(f.reason).toBe("value converter failed");
    expect(f.wrapperClass).toBeUndefined();
    expect(originOf(h)).toEqual({
      convention: "connect",
      topic: "payments",
      partition: "2",
      offset: "1234567890123",
      group: "jdbc-sink (task 1)",
    });
  });
});

describe("Kafka Streams __streams.errors.* headers (byte-exact)", () => {
  it("decodes text headers and a null message", () => {
    const h = decodeHeaders([
      ["__streams.errors.exception", utf8("org.apache.kafka.common.errors.SerializationException")],
      ["__streams.errors.message", null],
      ["__streams.errors.stacktrace", utf8("trace")],
      ["__streams.errors.topic", utf8("clicks")],
      ["__streams.errors.partition", utf8("0")],
      ["__streams.errors.offset", utf8("17")],
    ]);
    expect(h[1].value).toEqual({ t: "null" });
    const f = failureFromHeaders(h, null, "configured-origin");
    expect(f.exceptionClass).toBe("org.apache.kafka.common.errors.SerializationException");
    expect(f.exceptionMessage).toBeNull();
    expect(f.reason).toBe("stream processing failed");
    expect(f.originQueue).toBe("clicks");
    expect(originOf(h).offset).toBe("17");
  });
});

describe("unknown headers", () => {
  it("text when valid UTF-8, else bytes with exact base64; repeated names kept in order", () => {
    const raw = rawHeadersFromKafkajs({
      "x-trace": Buffer.from("abc"),
      "x-bin": Buffer.from([0xc3, 0x28, 0xff]),
      "x-dup": [Buffer.from("1"), Buffer.from("2")],
      "x-empty": Buffer.alloc(0),
    });
    const h = decodeHeaders(raw);
    expect(h.map((x) => x.name)).toEqual(["x-trace", "x-bin", "x-dup", "x-dup", "x-empty"]);
    expect(h[0].value).toEqual({ t: "bytes", v: "YWJj", size: 3, text: "abc" });
    expect(h[1].value).toEqual({ t: "bytes", v: Buffer.from([0xc3, 0x28, 0xff]).toString("base64"), size: 3 });
    expect(h[4].value).toEqual({ t: "bytes", v: "", size: 0, text: "" });
    expect(failureFromHeaders(h, null, "cfg").originQueue).toBe("cfg");
  });
});

describe("discovery and ids", () => {
  it("matches the default patterns and skips internal topics", () => {
    const pats = ["*.DLT", "*-dlt", "*.dlq", "dlq.*", "*-dead-letter"];
    expect(
      matchDeadLetterTopics(
        [
          "orders",
          "orders.DLT",
          "a-dlt",
          "x.dlq",
          "dlq.sink",
          "p-dead-letter",
          "__consumer_offsets",
          "orders.DLTX",
          "ordersDLT",
        ],
        pats,
      ),
    ).toEqual(["a-dlt", "dlq.sink", "orders.DLT", "p-dead-letter", "x.dlq"]);
    expect(topicGlob("a.b?").test("a.bc")).toBe(true);
    expect(topicGlob("a.b?").test("axbc")).toBe(false);
  });
  it("parses <partition>-<offset> ids exactly", () => {
    expect(parseLetterId("3-9223372036854775807")).toEqual({ partition: 3, offset: 9223372036854775807n });
    expect(parseLetterId("3-9223372036854775808")).toBeNull();
    expect(parseLetterId("m-abc")).toBeNull();
  });
});

describe("paging over partitions", () => {
  const parts = [
    { partition: 0, start: 10n, end: 13n },
    { partition: 1, start: 0n, end: 2n },
  ];
  it("oldest first across partitions", () => {
    const p = planPage(parts, { order: "oldest", offset: 2, limit: 2 });
    expect(p.segments.map((s) => [s.partition, s.from, s.to])).toEqual([
      [0, 12n, 13n],
      [1, 0n, 1n],
    ]);
    expect(p.segments[1].positionOf(0n)).toBe(3);
    expect(p.hasMore).toBe(true);
  });
  it("newest first across partitions", () => {
    const p = planPage(parts, { order: "newest", offset: 0, limit: 3 });
    expect(p.segments.map((s) => [s.partition, s.from, s.to])).toEqual([
      [1, 0n, 2n],
      [0, 12n, 13n],
    ]);
    expect(p.segments[0].positionOf(1n)).toBe(0);
    expect(p.segments[1].positionOf(12n)).toBe(2);
  });
  it("one partition from an offset, both directions", () => {
    expect(
      planPage(parts, { partition: 0, fromOffset: 11n, order: "oldest", offset: 0, limit: 10 }).segments.map((s) => [
        s.from,
        s.to,
      ]),
    ).toEqual([[11n, 13n]]);
    const n = planPage(parts, { partition: 0, fromOffset: 11n, order: "newest", offset: 0, limit: 10 });
    expect(n.segments.map((s) => [s.from, s.to])).toEqual([[10n, 12n]]);
    expect(n.hasMore).toBe(false);
  });
});

describe("retention warnings", () => {
  const day = 86_400_000;
  it("warns near deletion and for compaction", () => {
    const w = retentionWarnings(
      { retentionMs: 7 * day, retentionBytes: -1, cleanupPolicy: "compact,delete", maxMessageBytes: null },
      { at: 0, partition: 1, offset: 5n },
      6 * day,
      0.8,
    );
    expect(w.map((x) => x.code)).toEqual(["compacted", "near_retention"]);
    expect(w[1].message).toContain("partition 1, offset 5");
    expect(
      retentionWarnings(
        { retentionMs: 7 * day, retentionBytes: -1, cleanupPolicy: "delete", maxMessageBytes: null },
        { at: 0, partition: 0, offset: 0n },
        day,
        0.8,
      ),
    ).toEqual([]);
  });
});
