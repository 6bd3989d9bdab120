import { describe, expect, it } from "vitest";
import { decodeHeaders, failureFromHeaders, type RawHeader } from "@/lib/brokers/kafka/headers";
import { toLetter } from "@/lib/brokers/kafka/letter";
import { connectReason, deathReason, springException, springReason } from "@/lib/brokers/kafka/failure-words";

const utf8 = (s: string) => new TextEncoder().encode(s);
const LEFE = "org.springframework.kafka.listener.ListenerExecutionFailedException";
const spring = (extra: RawHeader[]): RawHeader[] => [["kafka_dlt-original-topic", utf8("demo.orders")], ...extra];

describe("Spring Kafka: the cause, not the wrapper", () => {
  it("Spring 6: the wrapper's message names no cause; the stack's 'Caused by' line gives its message", () => {
    const f = failureFromHeaders(
      decodeHeaders(
        spring([
          ["kafka_dlt-exception-fqcn", utf8(LEFE)],
          ["kafka_dlt-exception-cause-fqcn", utf8("com.acme.orders.OutOfStockException")],
          ["kafka_dlt-exception-message", utf8("Listener method 'onOrder' threw exception")],
          [
            "kafka_dlt-exception-stacktrace",
            utf8(
              `${LEFE}: Listener method 'onOrder' threw exception\n\tat org.springframework.kafka.X.y(X.java:1)\nCaused by: com.acme.orders.OutOfStockException: SKU AB-12 has 0 units left\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)\n\t... 3 more`,
            ),
          ],
        ]),
      ),
      null,
      null,
    );
    expect(f).toMatchObject({
      exceptionClass: "com.acme.orders.OutOfStockException",
      exceptionMessage: "SKU AB-12 has 0 units left",
      wrapperClass: LEFE,
      reason: "listener failed",
      originQueue: "demo.orders",
    });
  });

  it("Spring 5: 'nested exception is C: msg' in the wrapper's message", () => {
    expect(
      springException({
        exceptionClass: LEFE,
        causeClass: "java.lang.IllegalArgumentException",
        message: "Listener method threw exception; nested exception is java.lang.IllegalArgumentException: bad id 7",
        stackTrace: null,
      }),
    ).toEqual({
      exceptionClass: "java.lang.IllegalArgumentException",
      exceptionMessage: "bad id 7",
      wrapperClass: LEFE,
    });
  });

  it("'…; C: msg' in the wrapper's message, and a name that only ends like the cause is not it", () => {
    expect(
      springException({
        exceptionClass: LEFE,
        causeClass: "acme.X",
        message: "Listener failed; com.acme.X: not this one; acme.X: this one",
        stackTrace: null,
      }).exceptionMessage,
    ).toBe("this one");
    expect(
      springException({
        exceptionClass: LEFE,
        causeClass: "acme.X",
        message: "Listener failed; com.acme.X: no",
        stackTrace: null,
      }).exceptionMessage,
    ).toBe("Listener failed; com.acme.X: no");
  });

  it("a cause whose message is recorded nowhere keeps the wrapper's message (what the headers hold)", () => {
    expect(
      springException({
        exceptionClass: LEFE,
        causeClass: "acme.Boom",
        message: "Listener failed",
        stackTrace: "acme.Boom\n\tat a.b(C.java:1)",
      }),
    ).toEqual({ exceptionClass: "acme.Boom", exceptionMessage: null, wrapperClass: LEFE });
    expect(
      springException({ exceptionClass: LEFE, causeClass: "acme.Boom", message: "Listener failed", stackTrace: null }),
    ).toEqual({
      exceptionClass: "acme.Boom",
      exceptionMessage: "Listener failed",
      wrapperClass: LEFE,
    });
  });

  it("absent, blank or self-naming cause headers leave the exception as the headers give it", () => {
    for (const cause of [null, "", "   ", LEFE])
      expect(springException({ exceptionClass: LEFE, causeClass: cause, message: "m", stackTrace: null })).toEqual({
        exceptionClass: LEFE,
        exceptionMessage: "m",
        wrapperClass: null,
      });
    const f = failureFromHeaders(decodeHeaders(spring([["kafka_dlt-exception-fqcn", utf8(LEFE)]])), null, null);
    expect(f.exceptionClass).toBe(LEFE);
    expect(f.wrapperClass).toBeUndefined();
  });

  it("hostile cause headers stay text: markup, a cause header that is not UTF-8, a header without value", () => {
    const markup = '<img src=x onerror="alert(1)">';
    const f = failureFromHeaders(
      decodeHeaders(
        spring([
          ["kafka_dlt-exception-fqcn", utf8(LEFE)],
          ["kafka_dlt-exception-cause-fqcn", utf8(markup)],
          ["kafka_dlt-exception-message", utf8(`x; ${markup}: <script>alert(2)</script>`)],
        ]),
      ),
      null,
      null,
    );
    expect(f.exceptionClass).toBe(markup);
    expect(f.exceptionMessage).toBe("<script>alert(2)</script>");
    for (const bad of [Uint8Array.from([0xc3, 0x28, 0xff]), null]) {
      const g = failureFromHeaders(
        decodeHeaders(
          spring([
            ["kafka_dlt-exception-fqcn", utf8(LEFE)],
            ["kafka_dlt-exception-cause-fqcn", bad],
          ]),
        ),
        null,
        null,
      );
      expect(g.exceptionClass).toBe(LEFE);
      expect(g.wrapperClass).toBeUndefined();
    }
  });

  it("uses the last failure's cause when Spring kept earlier exception headers", () => {
    const f = failureFromHeaders(
      decodeHeaders(
        spring([
          ["kafka_dlt-exception-fqcn", utf8(LEFE)],
          ["kafka_dlt-exception-cause-fqcn", utf8("first.Cause")],
          ["kafka_dlt-exception-fqcn", utf8(LEFE)],
          ["kafka_dlt-exception-cause-fqcn", utf8("second.Cause")],
        ]),
      ),
      null,
      null,
    );
    expect(f.exceptionClass).toBe("second.Cause");
  });
});

describe("reasons read as reasons", () => {
  it("Spring: listener, key and value deserialization, an operator's skip", () => {
    expect(springReason({ keyException: false, exceptionClass: "acme.X" })).toBe("listener failed");
    expect(springReason({ keyException: true, exceptionClass: "acme.X" })).toBe("key deserialization failed");
    expect(
      springReason({
        keyException: false,
        exceptionClass: "org.springframework.kafka.support.serializer.DeserializationException",
      }),
    ).toBe("value deserialization failed");
    expect(springReason({ keyException: false, exceptionClass: "dlq-console.OperatorSkip" })).toBe(
      "skipped by an operator",
    );
    const key = failureFromHeaders(
      decodeHeaders(spring([["kafka_dlt-key-exception-fqcn", utf8("acme.KeyBroken")]])),
      null,
      null,
    );
    expect(key.reason).toBe("key deserialization failed");
  });

  it("Kafka Connect: each stage in words; unknown and absent stages still read as a reason", () => {
    expect(connectReason("VALUE_CONVERTER")).toBe("value converter failed");
    expect(connectReason("TRANSFORMATION")).toBe("transformation failed");
    expect(connectReason("TASK_PUT")).toBe("sink task failed to write it");
    expect(connectReason("NEW_STAGE")).toBe("connector failed at new stage");
    expect(connectReason(null)).toBe("connector failed");
  });

  it("the death history names the reason and the cause, never the convention", () => {
    expect(deathReason("listener failed", "acme.X")).toBe("listener failed: acme.X");
    expect(deathReason("stream processing failed", null)).toBe("stream processing failed");
    expect(deathReason(null, null)).toBeNull();
    for (const [headers, want] of [
      [
        spring([
          ["kafka_dlt-exception-fqcn", utf8(LEFE)],
          ["kafka_dlt-exception-cause-fqcn", utf8("com.acme.orders.OutOfStockException")],
        ]),
        "listener failed: com.acme.orders.OutOfStockException",
      ],
      [
        [
          ["__connect.errors.topic", utf8("payments")],
          ["__connect.errors.stage", utf8("VALUE_CONVERTER")],
          ["__connect.errors.exception.class.name", utf8("org.apache.kafka.connect.errors.DataException")],
        ],
        "value converter failed: org.apache.kafka.connect.errors.DataException",
      ],
      [
        [
          ["__streams.errors.topic", utf8("clicks")],
          ["__streams.errors.exception", utf8("org.apache.kafka.common.errors.SerializationException")],
        ],
        "stream processing failed: org.apache.kafka.common.errors.SerializationException",
      ],
    ] as Array<[RawHeader[], string]>) {
      const headersRecord: Record<string, Uint8Array | null> = Object.fromEntries(headers);
      const l = toLetter(
        "t.DLT",
        0,
        { offset: "0", timestamp: "0", key: null, value: utf8("{}"), headers: headersRecord },
        0,
        { configOrigin: null },
      );
      expect(l.history).toHaveLength(1);
      expect(l.history[0].reason).toBe(want);
      expect(l.history[0].reason).not.toMatch(/^(spring|connect|streams)$/);
    }
  });
});
