import { describe, expect, it } from "vitest";
import type { FailureInfo, Letter } from "@/lib/brokers/contract/letter";
import { keyringFromEnv } from "@/lib/crypto/payload-cipher";
import { DEFAULT_CLASSIFICATION_RULES } from "@/lib/triage";
import { toLetter as kafkaLetter } from "@/lib/brokers/kafka/letter";
import { JAVA_SPRING } from "./fixtures.test-data";
import { CAUSE_FQCN_HEADER, cachedResolveFailure, failureCacheStats, resolveFailure, toIndexRow } from "./index-row";

const ring = keyringFromEnv({ DLQ_INDEX_KEY: Buffer.alloc(32, 1).toString("base64") });
const failure = (f: Partial<FailureInfo>): FailureInfo => ({
  deadLetteredAt: null,
  reason: "exception",
  originQueue: "orders",
  exchange: null,
  routingKeys: [],
  count: 1,
  deliveryCount: null,
  exceptionClass: null,
  exceptionMessage: null,
  stackTrace: null,
  ...f,
});
const letter = (f: Partial<FailureInfo>, headers: Record<string, string> = {}): Letter => ({
  id: "l-1",
  position: 0,
  messageId: "m-1",
  correlationId: null,
  body: new TextEncoder().encode("{}"),
  bodySize: 2,
  bodyTruncated: false,
  sha256: "0".repeat(64),
  contentType: null,
  contentEncoding: null,
  properties: [],
  headers: Object.entries(headers).map(([name, v]) => ({ name, value: { t: "string", v } })),
  failure: failure(f),
  history: [],
  orderingKey: null,
});
const row = (l: Letter) =>
  toIndexRow(l, {
    connectionId: "c",
    queue: "q",
    rules: DEFAULT_CLASSIFICATION_RULES,
    ring,
    randomAccess: false,
    search: { version: 1, roles: [], hashKey: "k" },
  });

const WRAPPER = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException";
const KAFKA_WRAPPER = "org.springframework.kafka.listener.ListenerExecutionFailedException";

describe("toIndexRow resolves Spring wrappers to the root cause", () => {
  it("AMQP: class, message, label and disposition come from the stack's root cause", () => {
    const r = row(
      letter({
        exceptionClass: WRAPPER,
        exceptionMessage:
          "Listener method 'public void com.acme.orders.OrderListener.onOrder(com.acme.orders.Order)' threw exception",
        stackTrace: JAVA_SPRING,
      }),
    );
    expect(r.exception_class).toBe("java.net.SocketTimeoutException");
    expect(r.exception_message).toBe("Read timed out after 30000 ms");
    expect(r.group_label.startsWith("java.net.SocketTimeoutException: Read timed out after <num> ms")).toBe(true);
    expect(r.group_label).not.toContain("ListenerExecutionFailedException");
    expect(r.disposition).toBe("transient");
    expect(r.rule_id).toBe("transient.timeout");
  });

  it("keeps the wrapper as the resolved failure's wrapperClass", () => {
    const r = resolveFailure(
      failure({ exceptionClass: WRAPPER, exceptionMessage: "x", stackTrace: JAVA_SPRING }),
      null,
      undefined,
    );
    expect(r.wrapperClass).toBe(WRAPPER);
    expect(r.exceptionClass).toBe("java.net.SocketTimeoutException");
  });

  it("Kafka: the cause header names the class when the stack shows no chain", () => {
    const stack = `${KAFKA_WRAPPER}: Listener failed\n\tat org.springframework.kafka.listener.KafkaMessageListenerContainer$ListenerConsumer.decorateException(KafkaMessageListenerContainer.java:2945)\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:31)`;
    const l = letter(
      {
        exceptionClass: KAFKA_WRAPPER,
        exceptionMessage:
          "Listener failed; nested exception is com.fasterxml.jackson.core.JsonParseException: Unexpected character ('x' (code 120)) at offset 17",
        stackTrace: stack,
      },
      {
        [CAUSE_FQCN_HEADER]: "com.fasterxml.jackson.core.JsonParseException",
        "kafka_dlt-exception-fqcn": KAFKA_WRAPPER,
      },
    );
    const r = row(l);
    expect(r.exception_class).toBe("com.fasterxml.jackson.core.JsonParseException");
    expect(r.exception_message).toBe("Unexpected character ('x' (code 120)) at offset 17");
    expect(r.group_label.startsWith("com.fasterxml.jackson.core.JsonParseException: ")).toBe(true);
    expect(r.disposition).toBe("permanent");
    expect(r.headers["kafka_dlt-exception-fqcn"]).toBe(KAFKA_WRAPPER); // the wrapper stays available
    // Same cause, another offset: same group.
    const l2 = letter(
      {
        ...l.failure,
        exceptionMessage:
          "Listener failed; nested exception is com.fasterxml.jackson.core.JsonParseException: Unexpected character ('y' (code 121)) at offset 99",
      },
      { [CAUSE_FQCN_HEADER]: "com.fasterxml.jackson.core.JsonParseException" },
    );
    expect(row(l2).group_key).toBe(r.group_key);
  });

  it("Kafka: a cause header without a nested message keeps the header's message", () => {
    const r = row(
      letter(
        { exceptionClass: KAFKA_WRAPPER, exceptionMessage: "Listener method threw exception" },
        { [CAUSE_FQCN_HEADER]: "java.lang.NullPointerException" },
      ),
    );
    expect(r.exception_class).toBe("java.lang.NullPointerException");
    expect(r.exception_message).toBe("Listener method threw exception");
    expect(r.disposition).toBe("permanent");
  });

  it("a stack chain wins over the cause header (the header names only the direct cause)", () => {
    const r = row(
      letter(
        { exceptionClass: WRAPPER, exceptionMessage: "x", stackTrace: JAVA_SPRING },
        { [CAUSE_FQCN_HEADER]: "org.springframework.web.client.ResourceAccessException" },
      ),
    );
    expect(r.exception_class).toBe("java.net.SocketTimeoutException");
  });

  it("Kafka: the letter's own exception fields are what triage indexes (Spring 5, Spring 6, the seeded form)", () => {
    const cause = "com.acme.orders.OutOfStockException";
    const variants: Array<[string, string]> = [
      [
        `Listener failed; nested exception is ${cause}: SKU AB-12 has 0 units left`,
        `${KAFKA_WRAPPER}: x\n\tat a.B.c(B.java:1)`,
      ],
      [
        "Listener method 'onOrder' threw exception",
        `${KAFKA_WRAPPER}: Listener method 'onOrder' threw exception\n\tat a.B.c(B.java:1)\nCaused by: ${cause}: SKU AB-12 has 0 units left\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)`,
      ],
      [
        `Listener failed; ${cause}: SKU AB-12 has 0 units left`,
        `${cause}: SKU AB-12 has 0 units left\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)`,
      ],
    ];
    for (const [message, stack] of variants) {
      const b = (t: string) => Buffer.from(t, "utf8");
      const k = kafkaLetter(
        "demo.orders.DLT",
        0,
        {
          offset: "7",
          timestamp: "0",
          key: null,
          value: b("{}"),
          headers: {
            "kafka_dlt-original-topic": b("demo.orders"),
            "kafka_dlt-exception-fqcn": b(KAFKA_WRAPPER),
            [CAUSE_FQCN_HEADER]: b(cause),
            "kafka_dlt-exception-message": b(message),
            "kafka_dlt-exception-stacktrace": b(stack),
          },
        },
        0,
        { configOrigin: null },
      );
      expect(k.failure).toMatchObject({
        exceptionClass: cause,
        exceptionMessage: "SKU AB-12 has 0 units left",
        wrapperClass: KAFKA_WRAPPER,
      });
      const r = row(k);
      expect(r.exception_class).toBe(k.failure.exceptionClass);
      expect(r.exception_message).toBe(k.failure.exceptionMessage);
      expect(resolveFailure(k.failure, cause, undefined).wrapperClass).toBe(KAFKA_WRAPPER);
    }
  });

  it("plain letters are unchanged: header class and message, reason basis without exception", () => {
    const r = row(
      letter({ exceptionClass: "com.acme.ValidationException", exceptionMessage: "Field 'email' is invalid" }),
    );
    expect(r.exception_class).toBe("com.acme.ValidationException");
    expect(r.exception_message).toBe("Field 'email' is invalid");
    expect(r.disposition).toBe("permanent");
    const n = row(letter({ reason: "rejected", count: 2 }));
    expect(n.group_basis).toBe("reason");
    expect(n.exception_class).toBeNull();
  });
});

describe("cachedResolveFailure", () => {
  it("returns the same result as resolveFailure, per rule list", () => {
    const f = failure({ exceptionClass: WRAPPER, exceptionMessage: "x", stackTrace: JAVA_SPRING });
    const a = cachedResolveFailure(f, null, DEFAULT_CLASSIFICATION_RULES);
    expect(cachedResolveFailure({ ...f }, null, DEFAULT_CLASSIFICATION_RULES)).toBe(a);
    expect(a).toEqual(resolveFailure(f, null, DEFAULT_CLASSIFICATION_RULES));
    // Another rule list (an edit between scans) is not served from the first list's cache.
    const rules = [
      {
        id: "all-permanent",
        disposition: "permanent" as const,
        field: "any" as const,
        pattern: "Timeout",
        description: "",
      },
    ];
    expect(cachedResolveFailure(f, null, rules).ruleId).toBe("all-permanent");
  });

  it("stays bounded", () => {
    const rules = [...DEFAULT_CLASSIFICATION_RULES];
    for (let i = 0; i < 5000; i++)
      cachedResolveFailure(failure({ exceptionClass: "com.acme.E", exceptionMessage: `m ${i}` }), null, rules);
    const again = cachedResolveFailure(
      failure({ exceptionClass: "com.acme.E", exceptionMessage: "m 4999" }),
      null,
      rules,
    );
    expect(again.group.normalizedMessage).toBe("m <num>");
  });

  it("is bypassed while it misses (every message unique), still giving the same results, and tried again later", () => {
    const rules = [...DEFAULT_CLASSIFICATION_RULES];
    const f = (i: number) => failure({ exceptionClass: "com.acme.E", exceptionMessage: `order ${i} timed out` });
    for (let i = 0; i < 256; i++) cachedResolveFailure(f(i), null, rules);
    expect(failureCacheStats(rules)).toEqual({ size: 256, bypass: 4096 });
    const r = cachedResolveFailure(f(1_000_000), null, rules);
    expect(r).toEqual(resolveFailure(f(1_000_000), null, rules));
    expect(failureCacheStats(rules)).toEqual({ size: 256, bypass: 4095 });
    for (let i = 0; i < 4095; i++) cachedResolveFailure(f(i), null, rules);
    expect(failureCacheStats(rules)?.bypass).toBe(0);
    // Repeating failures: the cache serves them and stays on.
    for (let i = 0; i < 1000; i++)
      expect(cachedResolveFailure(f(i % 10), null, rules)).toEqual(resolveFailure(f(i % 10), null, rules));
    expect(failureCacheStats(rules)?.bypass).toBe(0);
    expect(cachedResolveFailure(f(3), null, rules)).toBe(cachedResolveFailure(f(3), null, rules));
  });
});
