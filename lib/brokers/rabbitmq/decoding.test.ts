import { describe, expect, it } from "vitest";
import { decodeFieldTable } from "@/lib/brokers/rabbitmq/field-table";
import { exceptionClassFromStack } from "@/lib/brokers/failure-text";
import { failureFromHeaders, parseXDeath } from "@/lib/brokers/rabbitmq/failure";
import { discoverDlqs, topicMatches } from "@/lib/brokers/rabbitmq/discovery";
import { OccurrenceCounter, baseLetterId, fingerprint } from "@/lib/brokers/rabbitmq/identity";
import { isValidUtf8, bytesValue } from "@/lib/brokers/display";

function entry(name: string, tag: string, payload: Buffer) {
  return Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from(tag), payload]);
}
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};

describe("field table decoding", () => {
  it("keeps 64-bit integers exact, invalid UTF-8 longstr as bytes, timestamps, nested tables", () => {
    const big = Buffer.alloc(8);
    big.writeBigInt64BE(9007199254740993n);
    const ts = Buffer.alloc(8);
    ts.writeBigUInt64BE(1700000000n);
    const bad = Buffer.from([0xc3, 0x28]);
    const inner = entry("q", "S", Buffer.concat([u32(3), Buffer.from("abc")]));
    const table = Buffer.concat([
      entry("big", "l", big),
      entry("bad", "S", Buffer.concat([u32(bad.length), bad])),
      entry("ts", "T", ts),
      entry("nested", "F", Buffer.concat([u32(inner.length), inner])),
      entry(
        "arr",
        "A",
        Buffer.concat([
          u32(5),
          Buffer.from("b"),
          Buffer.from([0xff]),
          Buffer.from("t"),
          Buffer.from([1]),
          Buffer.from("V"),
        ]),
      ),
    ]);
    expect(decodeFieldTable(table)).toEqual([
      { name: "big", value: { t: "number", v: "9007199254740993" } },
      { name: "bad", value: { t: "bytes", v: "wyg=", size: 2 } },
      { name: "ts", value: { t: "timestamp", v: "2023-11-14T22:13:20.000Z" } },
      { name: "nested", value: { t: "table", v: [["q", { t: "string", v: "abc" }]] } },
      { name: "arr", value: { t: "array", v: [{ t: "number", v: "-1" }, { t: "boolean", v: true }, { t: "null" }] } },
    ]);
  });

  it("refuses truncated tables", () => {
    expect(() => decodeFieldTable(entry("x", "S", u32(10)))).toThrow(RangeError);
  });
});

describe("failure metadata", () => {
  const xDeath = {
    name: "x-death",
    value: {
      t: "array" as const,
      v: [
        {
          t: "table" as const,
          v: [
            ["count", { t: "number", v: "2" }],
            ["reason", { t: "string", v: "expired" }],
            ["queue", { t: "string", v: "b" }],
            ["time", { t: "timestamp", v: "2024-01-01T00:00:00.000Z" }],
            ["exchange", { t: "string", v: "ex" }],
            ["routing-keys", { t: "array", v: [{ t: "string", v: "rk" }] }],
            ["original-expiration", { t: "string", v: "1000" }],
          ] as Array<[string, never]>,
        },
        {
          t: "table" as const,
          v: [
            ["queue", { t: "string", v: "a" }],
            ["reason", { t: "string", v: "rejected" }],
          ] as Array<[string, never]>,
        },
      ],
    },
  };
  it("parses x-death most recent first with extra fields", () => {
    const h = parseXDeath([xDeath]);
    expect(h.map((d) => d.queue)).toEqual(["b", "a"]);
    expect(h[0]).toMatchObject({
      count: 2,
      reason: "expired",
      exchange: "ex",
      routingKeys: ["rk"],
      time: "2024-01-01T00:00:00.000Z",
    });
    expect(h[0].extra).toEqual([{ name: "original-expiration", value: { t: "string", v: "1000" } }]);
    expect(failureFromHeaders([xDeath], h, "cfg").originQueue).toBe("b");
  });
  it("extracts exception classes from headers and stack traces", () => {
    expect(exceptionClassFromStack("com.foo.BarException: boom\n\tat x")).toBe("com.foo.BarException");
    expect(exceptionClassFromStack("Caused by: java.io.IOException")).toBe("java.io.IOException");
    expect(exceptionClassFromStack("something went wrong")).toBeNull();
    const f = failureFromHeaders([{ name: "exception-class", value: { t: "string", v: "X.Y" } }], [], "cfg");
    expect(f).toMatchObject({ exceptionClass: "X.Y", originQueue: "cfg", reason: "exception" });
  });
});

describe("discovery", () => {
  it("resolves DLX through bindings, default exchange and policies", () => {
    const queues = [
      { name: "src1", vhost: "/", arguments: { "x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k1" } },
      { name: "src2", vhost: "/", arguments: { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq2" } },
      { name: "src3", vhost: "/", effective_policy_definition: { "dead-letter-exchange": "tx" } },
      { name: "dlq1", vhost: "/" },
      { name: "dlq2", vhost: "/" },
      { name: "dlq3", vhost: "/" },
      { name: "other", vhost: "/" },
    ];
    const bindings = [
      { source: "dlx", destination: "dlq1", destination_type: "queue" as const, routing_key: "k1" },
      { source: "dlx", destination: "other", destination_type: "queue" as const, routing_key: "k2" },
      { source: "tx", destination: "dlq3", destination_type: "queue" as const, routing_key: "a.#" },
    ];
    const found = discoverDlqs(queues, bindings, [
      { name: "dlx", type: "direct" },
      { name: "tx", type: "topic" },
    ]);
    expect(Object.fromEntries(found)).toEqual({ dlq1: ["src1"], dlq2: ["src2"], dlq3: ["src3"] });
    expect(topicMatches("a.#", "a")).toBe(true);
    expect(topicMatches("*.b", "a.b.c")).toBe(false);
  });

  it("a console's read lock queue is never an origin, even under a policy that gives every queue a DLX", () => {
    const everyQueue = { "dead-letter-exchange": "", "dead-letter-routing-key": "dlq" };
    const queues = [
      { name: "orders", vhost: "/", effective_policy_definition: everyQueue },
      { name: "dlq-console.read-lock.dlq", vhost: "/", effective_policy_definition: everyQueue },
      { name: "dlq", vhost: "/" },
    ];
    expect(Object.fromEntries(discoverDlqs(queues, [], []))).toEqual({ dlq: ["orders"] });
  });
});

describe("identity", () => {
  it("is URL-safe, ignores broker-mutated headers, and numbers identical letters", () => {
    const a = fingerprint(
      "abc",
      [],
      [
        { name: "k", value: { t: "string", v: "v" } },
        { name: "x-death", value: { t: "null" } },
      ],
    );
    const b = fingerprint(
      "abc",
      [{ name: "expiration", value: { t: "string", v: "5" } }],
      [
        { name: "k", value: { t: "string", v: "v" } },
        { name: "x-delivery-count", value: { t: "number", v: "3" } },
      ],
    );
    expect(a).toBe(b);
    expect(baseLetterId("order/1?x", () => a)).toMatch(/^m-[A-Za-z0-9_-]+$/);
    const occ = new OccurrenceCounter();
    expect(["f-x", "f-y", "f-x", "f-x"].map((id) => occ.next(id))).toEqual(["f-x", "f-y", "f-x~2", "f-x~3"]);
  });
  it("checks UTF-8 strictly", () => {
    expect(isValidUtf8(Buffer.from("héllo"))).toBe(true);
    expect(isValidUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBe(false);
    expect(bytesValue(Buffer.from([0xff]))).toEqual({ t: "bytes", v: "/w==", size: 1 });
  });
});
