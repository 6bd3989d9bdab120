// A WebSocket message frame of the real Pulsar 4.0.7 broker → Letter: the dead-letter properties
// decoded, the properties kept exactly, the redelivery count inferred only from configuration.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { toLetter, bareTopic, type PulsarMessageFrame } from "@/lib/brokers/pulsar/letter";
import { decodeMessageId } from "@/lib/brokers/pulsar/message-id";
import { displayText } from "@/lib/brokers/display";
import type { Letter } from "@/lib/brokers/contract/letter";

/** As a DLQ reader received it from the broker (its properties in the broker's order). */
const REAL_FRAME = `{"messageId":"CAgQADAA","payload":"aGVsbG8tMg==","properties":{"REAL_TOPIC":"persistent://public/default/exp","REAL_SUBSCRIPTION":"sub","ORIGIN_MESSAGE_ID":"10:2:-1","x<b>":"\\u0000evil","ORIGIN_MESSAGE_IDY_TIME":"10:2:-1","k":"v2"},"publishTime":"2026-12-02T17:24:13.82Z","redeliveryCount":0,"eventTime":"2026-01-01T00:00:00Z","key":"key-2"}`;

const frame = (over: Partial<PulsarMessageFrame> = {}): PulsarMessageFrame => ({
  ...(JSON.parse(REAL_FRAME) as PulsarMessageFrame),
  ...over,
});
const read = (
  f: PulsarMessageFrame,
  ctx: { maxBodyBytes?: number; maxRedeliverCount?: number; configOrigin?: string | null } = {},
  position = 0,
) => toLetter(f, decodeMessageId(f.messageId), position, { configOrigin: null, ...ctx });
const prop = (l: Letter, name: string) => displayText(l.properties.find((p) => p.name === name)?.value);
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

describe("toLetter", () => {
  it("decodes a real dead letter: origin without persistent://, reason, subscription and origin message id", () => {
    const l = read(frame(), {}, 4);
    expect(l.id).toBe("8-0");
    expect(l.position).toBe(4);
    expect(l.messageId).toBe("8:0:-1");
    expect(Buffer.from(l.body).toString()).toBe("hello-2");
    expect(l.orderingKey).toBe("key-2");
    expect(l.failure).toEqual({
      deadLetteredAt: "2026-12-02T17:24:13.820Z",
      reason: "maxRedeliverCount",
      originQueue: "public/default/exp",
      exchange: null,
      routingKeys: [],
      count: null,
      deliveryCount: null,
      exceptionClass: null,
      exceptionMessage: null,
      stackTrace: null,
    });
    expect(l.history).toEqual([
      {
        queue: "public/default/exp",
        reason: "maxRedeliverCount",
        count: null,
        time: "2026-12-02T17:24:13.820Z",
        exchange: null,
        routingKeys: [],
        extra: [
          { name: "subscription", value: { t: "string", v: "sub" } },
          { name: "origin message id", value: { t: "string", v: "10:2:-1" } },
        ],
      },
    ]);
  });

  it("lists the message id, key, publish and event time, origin subscription and message id as properties", () => {
    const l = read(frame());
    expect(l.properties).toEqual([
      { name: "message id", value: { t: "string", v: "8:0:-1" } },
      { name: "key", value: { t: "string", v: "key-2" } },
      { name: "publish time", value: { t: "timestamp", v: "2026-12-02T17:24:13.820Z" } },
      { name: "event time", value: { t: "timestamp", v: "2026-01-01T00:00:00.000Z" } },
      { name: "origin subscription", value: { t: "string", v: "sub" } },
      { name: "origin message id", value: { t: "string", v: "10:2:-1" } },
    ]);
  });

  it("keeps every property as a header exactly as sent and in order, a hostile value as text", () => {
    const l = read(frame());
    expect(l.headers).toEqual([
      { name: "REAL_TOPIC", value: { t: "string", v: "persistent://public/default/exp" } },
      { name: "REAL_SUBSCRIPTION", value: { t: "string", v: "sub" } },
      { name: "ORIGIN_MESSAGE_ID", value: { t: "string", v: "10:2:-1" } },
      { name: "x<b>", value: { t: "string", v: "\u0000evil" } },
      { name: "ORIGIN_MESSAGE_IDY_TIME", value: { t: "string", v: "10:2:-1" } },
      { name: "k", value: { t: "string", v: "v2" } },
    ]);
  });

  it("infers the delivery count only from a configured maxRedeliverCount, and says it is inferred", () => {
    const without = read(frame());
    expect(without.failure.count).toBeNull();
    expect(without.properties.some((p) => p.name.startsWith("deliveries"))).toBe(false);

    const l = read(frame(), { maxRedeliverCount: 3 });
    expect(l.failure.count).toBe(4);
    expect(l.failure.deliveryCount).toBeNull();
    expect(l.history[0].count).toBe(4);
    expect(prop(l, "deliveries (inferred)")).toMatch(
      /^4: maxRedeliverCount 3 \+ 1, from the connection's configuration/,
    );
    expect(read(frame(), { maxRedeliverCount: 0 }).failure.count).toBe(1);
  });

  it("takes the count a retry-letter topic recorded (RECONSUMETIMES) over any inferred one", () => {
    const f = frame();
    f.properties = { ...f.properties, RECONSUMETIMES: "3", DELAY_TIME: "1000" };
    const l = read(f, { maxRedeliverCount: 5 });
    expect(l.failure.count).toBe(3);
    expect(prop(l, "retries (RECONSUMETIMES)")).toBe("3");
    expect(prop(l, "deliveries (inferred)")).toBeNull();
    f.properties = { ...f.properties, RECONSUMETIMES: "not a number" };
    expect(read(f, { maxRedeliverCount: 5 }).failure.count).toBe(6);
  });

  it("cuts the body to maxBodyBytes and hashes the whole payload", () => {
    const l = read(frame(), { maxBodyBytes: 5 });
    expect(Buffer.from(l.body).toString()).toBe("hello");
    expect(l.bodySize).toBe(7);
    expect(l.bodyTruncated).toBe(true);
    expect(l.sha256).toBe(sha("hello-2"));
    const whole = read(frame(), { maxBodyBytes: 7 });
    expect(whole.bodyTruncated).toBe(false);
    expect(Buffer.from(whole.body).toString()).toBe("hello-2");
  });

  it("keeps binary payload bytes exactly", () => {
    const bytes = Buffer.from([0, 255, 128, 10, 13, 0xc3]);
    const l = read(frame({ payload: bytes.toString("base64") }));
    expect(Buffer.from(l.body).equals(bytes)).toBe(true);
    expect(l.sha256).toBe(sha(bytes));
  });

  it("reads an empty payload as zero bytes", () => {
    const l = read(frame({ payload: "" }), { maxBodyBytes: 0 });
    expect(l.body).toHaveLength(0);
    expect(l.bodySize).toBe(0);
    expect(l.bodyTruncated).toBe(false);
    expect(l.sha256).toBe(sha(""));
  });

  it("a message not dead-lettered by Pulsar's client: the configured origin, no reason, no history, no inferred count", () => {
    const l = read(frame({ properties: { k: "v" }, key: undefined, eventTime: undefined }), {
      maxRedeliverCount: 3,
      configOrigin: "public/default/orders",
    });
    expect(l.failure).toMatchObject({ originQueue: "public/default/orders", reason: null, count: null });
    expect(l.history).toEqual([]);
    expect(l.orderingKey).toBeNull();
    expect(l.properties.map((p) => p.name)).toEqual(["message id", "publish time"]);
  });

  it("takes exception class, message and correlation id from application properties", () => {
    const l = read(
      frame({
        properties: {
          ...frame().properties,
          "exception-class": "com.acme.Boom",
          "exception-message": "order 7 has no lines",
          "correlation-id": "c-1",
          "content-type": "text/plain",
        },
      }),
    );
    expect(l.failure).toMatchObject({ exceptionClass: "com.acme.Boom", exceptionMessage: "order 7 has no lines" });
    expect(l.correlationId).toBe("c-1");
    expect(l.contentType).toBe("text/plain");
  });

  it("shows no time the broker left unset or gave as the epoch", () => {
    const l = read(frame({ publishTime: "not a time", eventTime: "1970-01-01T00:00:00Z" }));
    expect(l.failure.deadLetteredAt).toBeNull();
    expect(l.properties.map((p) => p.name)).not.toContain("publish time");
    expect(l.properties.map((p) => p.name)).not.toContain("event time");
  });
});

describe("bareTopic", () => {
  it("strips persistent:// only", () => {
    expect(bareTopic("persistent://public/default/exp")).toBe("public/default/exp");
    expect(bareTopic("public/default/exp")).toBe("public/default/exp");
    expect(bareTopic("non-persistent://public/default/exp")).toBe("non-persistent://public/default/exp");
  });
});
