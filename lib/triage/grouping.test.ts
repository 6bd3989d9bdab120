import { describe, expect, it } from "vitest";
import { groupKeyOf, receiveCountBucket, type GroupingInput } from "./grouping";
import * as F from "./fixtures.test-data";

const input = (over: Partial<GroupingInput>): GroupingInput => ({
  exceptionClass: null,
  exceptionMessage: null,
  stackTrace: null,
  reason: null,
  count: null,
  ...over,
});

describe("groupKeyOf: exception basis", () => {
  it("groups a Spring-wrapped failure by its root cause", () => {
    const g = groupKeyOf(input({ stackTrace: F.JAVA_SPRING, reason: "rejected", count: 3 }));
    expect(g).toMatchObject({
      basis: "exception",
      exceptionClass: "java.net.SocketTimeoutException",
      normalizedMessage: "Read timed out after <num> ms",
      topFrame: "com.acme.orders.PaymentClient.charge",
      wrapperClass: "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
      reason: null,
      label: "java.net.SocketTimeoutException: Read timed out after <num> ms @ com.acme.orders.PaymentClient.charge",
    });
    expect(g.key).toMatch(/^[0-9a-f]{32}$/);
  });

  it("looks through a wrapper class given in headers (Spring AMQP's x-exception-message is the wrapper's)", () => {
    const fromHeaders = groupKeyOf(
      input({
        exceptionClass: "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
        exceptionMessage: "Listener method threw exception",
        stackTrace: F.JAVA_SPRING,
      }),
    );
    expect(fromHeaders.key).toBe(groupKeyOf(input({ stackTrace: F.JAVA_SPRING })).key);
  });

  it("uses the header message when it describes the root cause (headers are not truncated)", () => {
    const g = groupKeyOf(
      input({
        exceptionClass: "java.net.SocketTimeoutException",
        exceptionMessage: "Read timed out after 5 ms (full)",
        stackTrace: F.JAVA_SPRING,
      }),
    );
    expect(g.normalizedMessage).toBe("Read timed out after <num> ms (full)");
    expect(g.wrapperClass).toBeNull();
  });

  it("reads Spring's 'nested exception is' when there is no stack trace", () => {
    const g = groupKeyOf(
      input({
        exceptionClass: "org.springframework.kafka.listener.ListenerExecutionFailedException",
        exceptionMessage:
          "Listener failed; nested exception is com.fasterxml.jackson.core.JsonParseException: Unexpected character ('x' (code 120)) at [Source: (String)\"x\"; line: 1, column: 2]",
      }),
    );
    expect(g.exceptionClass).toBe("com.fasterxml.jackson.core.JsonParseException");
    expect(g.wrapperClass).toBe("org.springframework.kafka.listener.ListenerExecutionFailedException");
    expect(g.normalizedMessage).toBe(
      "Unexpected character (<str> (code <num>)) at [Source: (String)<str>; line: <num>, column: <num>]",
    );
  });

  it.each([
    ["Java", F.JAVA_NPE, "java.lang.NullPointerException", "com.acme.notify.Mailer.send"],
    [".NET", F.DOTNET, "System.TimeoutException", "Acme.Orders.OrderRepository.SaveAsync"],
    ["Python", F.PYTHON_CHAINED, "TimeoutError", "socket.py in readinto"],
    ["Node", F.NODE, "TypeError", "OrderService.reserve (services/order-service.js)"],
    ["Go", F.GO_PANIC, "panic", "github.com/acme/orders/internal/consumer.(*Handler).Handle.func<n>"],
  ])("reads %s stack traces alone", (_, stackTrace, cls, frame) => {
    const g = groupKeyOf(input({ stackTrace }));
    expect([g.basis, g.exceptionClass, g.topFrame]).toEqual(["exception", cls, frame]);
  });

  it("keeps one key for messages that differ only in ids, and for the same trace at other line numbers", () => {
    const a = groupKeyOf(
      input({
        exceptionClass: "com.acme.OrderNotFound",
        exceptionMessage: "Order ORD-1 (550e8400-e29b-41d4-a716-446655440000) for 'alice'",
        stackTrace: F.JAVA_NPE,
      }),
    );
    const b = groupKeyOf(
      input({
        exceptionClass: "com.acme.OrderNotFound",
        exceptionMessage: "Order ORD-99812 (123e4567-e89b-12d3-a456-426614174000) for 'bob'",
        stackTrace: F.JAVA_NPE.replace(/:\d+\)/g, ":7)"),
      }),
    );
    expect(a.key).toBe(b.key);
  });

  it("separates different classes, messages and top frames", () => {
    const base = { exceptionClass: "com.acme.A", exceptionMessage: "boom", stackTrace: F.JAVA_NPE };
    const keys = new Set([
      groupKeyOf(input(base)).key,
      groupKeyOf(input({ ...base, exceptionClass: "com.acme.B" })).key,
      groupKeyOf(input({ ...base, exceptionMessage: "bang" })).key,
      groupKeyOf(input({ ...base, stackTrace: null })).key,
      groupKeyOf(input({ ...base, stackTrace: F.JAVA_NPE.replace("Mailer.send", "Mailer.queue") })).key,
    ]);
    expect(keys.size).toBe(5);
  });

  it("does not let a class and message run together into another's key", () => {
    expect(groupKeyOf(input({ exceptionClass: "a", exceptionMessage: "b c" })).key).not.toBe(
      groupKeyOf(input({ exceptionClass: "a b", exceptionMessage: "c" })).key,
    );
  });

  // Property-style: 200 generated letters of 4 failure shapes give exactly 4 keys.
  it("gives one key per failure shape over many generated letters", () => {
    const shapes = [
      (n: number) =>
        input({ exceptionClass: "java.net.SocketTimeoutException", exceptionMessage: `Read timed out after ${n} ms` }),
      (n: number) =>
        input({
          exceptionClass: "com.acme.OrderRejected",
          exceptionMessage: `Order ORD-${n * 7} rejected for 'cust-${n}' at ${new Date(1.7e12 + n * 1000).toISOString()}`,
        }),
      (n: number) =>
        input({ stackTrace: F.PYTHON.replace("'amount'", `'field_${n}'`).replace(/line \d+/g, `line ${n}`) }),
      (n: number) => input({ reason: "rejected", count: 2 + (n % 2) }),
    ];
    const keys = new Map<string, number>();
    for (let n = 1; n <= 50; n++)
      shapes.forEach((shape, i) => {
        const k = groupKeyOf(shape(n)).key;
        expect(keys.get(k) ?? i).toBe(i);
        keys.set(k, i);
      });
    expect(keys.size).toBe(4);
  });
});

describe("groupKeyOf: reason basis", () => {
  it("falls back to the reason and a receive-count bucket", () => {
    const g = groupKeyOf(input({ reason: "maxReceiveCount", count: 5 }));
    expect(g).toMatchObject({
      basis: "reason",
      reason: "maxReceiveCount / 4-10",
      receiveBucket: "4-10",
      exceptionClass: null,
      label: "maxReceiveCount, received 4-10 times",
    });
  });

  it("puts counts in the same bucket together and apart across buckets", () => {
    const k = (count: number | null, reason: string | null = "rejected") => groupKeyOf(input({ reason, count })).key;
    expect(k(2)).toBe(k(3));
    expect(k(4)).toBe(k(10));
    expect(k(1)).not.toBe(k(2));
    expect(k(11)).not.toBe(k(10));
    expect(k(3, "expired")).not.toBe(k(3));
  });

  it("handles letters with nothing to go on", () => {
    const g = groupKeyOf(input({ exceptionMessage: "   " }));
    expect(g).toMatchObject({
      basis: "reason",
      reason: "unknown / unknown",
      label: "No reason given, received an unknown number of times",
    });
    expect(groupKeyOf(input({ reason: "rejected", count: 1 })).label).toBe("rejected, received 1 time");
  });
});

describe("receiveCountBucket", () => {
  it.each([
    [null, "unknown"],
    [0, "unknown"],
    [Number.NaN, "unknown"],
    [1, "1"],
    [2, "2-3"],
    [3, "2-3"],
    [4, "4-10"],
    [10, "4-10"],
    [11, "11+"],
    [5000, "11+"],
  ])("%s → %s", (n, bucket) => {
    expect(receiveCountBucket(n)).toBe(bucket);
  });
});
