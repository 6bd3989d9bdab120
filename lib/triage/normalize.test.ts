import { describe, expect, it } from "vitest";
import {
  exceptionClassFromStack,
  normalizeMessage,
  parseStack,
  parseStackInFull,
  rootCauseOf,
  topStackFrame,
  MAX_MESSAGE_LENGTH,
} from "./normalize";
import * as F from "./fixtures.test-data";

describe("normalizeMessage", () => {
  it.each([
    ["numbers", "Read timed out after 30000 ms", "Read timed out after <num> ms"],
    ["decimals and lists", "got 3.75, expected one of [1, 2, 3]", "got <num>, expected one of [<num>]"],
    ["UUIDs", "Order 550e8400-e29b-41d4-a716-446655440000 missing", "Order <uuid> missing"],
    ["upper-case UUIDs", "id=550E8400-E29B-41D4-A716-446655440000", "id=<uuid>"],
    ["long hex ids", "trace 4bf92f3577b34da6a3ce929d0e0e4736 commit a1b2c3d", "trace <hex> commit <hex>"],
    ["0x literals", "bad pointer 0xc000184000", "bad pointer <hex>"],
    ["Java identity hashes", "Rejected com.acme.Task@1b6d3586", "Rejected com.acme.Task@<hex>"],
    ["single quotes", "Duplicate entry 'ORD-1' for key 'PRIMARY'", "Duplicate entry <str> for key <str>"],
    [
      "double quotes",
      'Cannot invoke "Customer.getEmail()" because "customer" is null',
      "Cannot invoke <str> because <str> is null",
    ],
    ["backticks", "Cannot deserialize value of type `java.time.Instant`", "Cannot deserialize value of type <str>"],
    ["apostrophes in words are not quotes", "Can't find 'x' and won't retry", "Can't find <str> and won't retry"],
    [
      "ISO timestamps",
      "expired at 2024-03-05T14:03:12.123Z (now 2024-03-05 14:05:00+01:00)",
      "expired at <ts> (now <ts>)",
    ],
    ["dates and times", "batch of 2024-03-05 closed at 23:59:59", "batch of <ts> closed at <ts>"],
    ["RFC 1123 and java.util.Date", "Mon, 02 Jan 2006 15:04:05 GMT / Tue Mar 05 14:03:12 UTC 2024", "<ts> / <ts>"],
    ["epoch millis", "message 1709647392123 too old", "message <ts> too old"],
    ["emails", "user jane.doe+test@example.co.uk not found", "user <email> not found"],
    ["IPv4 with port", "connect ECONNREFUSED 10.0.3.7:5432", "connect ECONNREFUSED <ip>"],
    [
      "IPv6",
      "no route to fe80::1ff:fe23:4567:890a or 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
      "no route to <ip> or <ip>",
    ],
    [
      "URLs keep scheme, host and path shape",
      "GET https://api.acme.com/v2/orders/123?token=abc&x=1#frag failed",
      "GET https://api.acme.com/v<num>/orders/<num>?<query> failed",
    ],
    ["order ids", "Order ORD-12345 and INV2024000123 rejected", "Order ORD-<num> and INV<num> rejected"],
    ["hex ids that happen to have no letter", "trace 4bf92f35 / 40892135", "trace <hex> / <hex>"],
    ["words made of hex letters are kept", "facade decade accede", "facade decade accede"],
    ["random tokens", "request id 7fJk2LmQ9xPz4RtW8 failed", "request id <id> failed"],
    [
      "HTTP status codes are kept",
      "HTTP 503 Service Unavailable; status code: 429; status=400",
      "HTTP 503 Service Unavailable; status code: 429; status=400",
    ],
    [
      "names with digits are kept",
      "invalid utf8 in base64 payload (sha256 mismatch)",
      "invalid utf8 in base64 payload (sha256 mismatch)",
    ],
    ["whitespace collapsed", "  line one\n\tline   two  ", "line one line two"],
  ])("replaces %s", (_, input, expected) => {
    expect(normalizeMessage(input)).toBe(expected);
  });

  it("caps the length", () => {
    const out = normalizeMessage("word ".repeat(500));
    expect(out.length).toBe(MAX_MESSAGE_LENGTH);
    expect(out.endsWith("…")).toBe(true);
  });

  it("is idempotent", () => {
    for (const m of ["Order 42 for 'bob' at 2024-01-01T00:00:00Z", "HTTP 503 from 10.0.0.1", "x <num> <str>"]) {
      expect(normalizeMessage(normalizeMessage(m))).toBe(normalizeMessage(m));
    }
  });

  it("handles empty and huge input: a huge one comes back capped and marked as cut", () => {
    expect(normalizeMessage("")).toBe("");
    // Its cost is bounded too: it reads the first 4,000 characters only (MAX_INPUT), whatever the size.
    const quoted = normalizeMessage(`'${"a".repeat(1_000_000)}`);
    expect(quoted).toBe(`'${"a".repeat(MAX_MESSAGE_LENGTH - 2)}…`);
    const numbers = normalizeMessage("1:".repeat(500_000));
    expect(numbers).toBe(`${"<num>:".repeat(60).slice(0, MAX_MESSAGE_LENGTH - 1)}…`);
  });

  // Property-style: many messages differing only in their variable parts normalise to one string.
  it("maps generated variants of one shape to one string", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[rnd(16)]).join("");
    const shapes = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const uuid = `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
      const ts = new Date(1.6e12 + rnd(1e9) * 1000).toISOString();
      const msg = `Order ORD-${rnd(1e6)} for '${hex(rnd(10) + 1)}' (${uuid}) from 10.${rnd(256)}.${rnd(256)}.${rnd(256)}:${rnd(65535)} failed at ${ts} after ${rnd(1e5)} ms, user u${rnd(999)}@acme.io, trace ${hex(32)}`;
      shapes.add(normalizeMessage(msg));
    }
    expect([...shapes]).toEqual([
      "Order ORD-<num> for <str> (<uuid>) from <ip> failed at <ts> after <num> ms, user <email>, trace <hex>",
    ]);
  });
});

describe("parseStack: Java", () => {
  it("follows Caused by to the root cause, whose first application frame is the top frame", () => {
    const p = parseStack(F.JAVA_SPRING)!;
    expect(p.language).toBe("java");
    expect(p.chain.map((c) => c.exceptionClass)).toEqual([
      "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
      "org.springframework.web.client.ResourceAccessException",
      "java.net.SocketTimeoutException",
    ]);
    expect(rootCauseOf(F.JAVA_SPRING)).toEqual({
      exceptionClass: "java.net.SocketTimeoutException",
      message: "Read timed out after 30000 ms",
      depth: 3,
    });
    // The root's frames are JDK and Apache; its elided tail comes from the enclosing exception.
    expect(topStackFrame(F.JAVA_SPRING)).toBe("com.acme.orders.PaymentClient.charge");
    expect(exceptionClassFromStack(F.JAVA_SPRING)).toBe(
      "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
    );
  });

  it("reconstructs '... N more' frames, skips Suppressed blocks and normalises lambdas and proxies", () => {
    const p = parseStack(F.JAVA_ROOT_IN_TAIL)!;
    expect(p.frames.map((f) => f.name)).toEqual([
      "java.lang.NumberFormatException.forInputString",
      "java.lang.Integer.parseInt",
      "com.acme.billing.InvoiceJob.lambda$run",
      "com.acme.billing.InvoiceJob$$Lambda.accept",
      "com.acme.billing.InvoiceJob$$EnhancerBySpringCGLIB.run",
      "java.lang.Thread.run",
    ]);
    expect(topStackFrame(F.JAVA_ROOT_IN_TAIL)).toBe("com.acme.billing.InvoiceJob.lambda$run");
    expect(rootCauseOf(F.JAVA_ROOT_IN_TAIL)?.exceptionClass).toBe("java.lang.NumberFormatException");
  });

  it("reads 'Exception in thread', module prefixes and anonymous classes", () => {
    expect(exceptionClassFromStack(F.JAVA_NPE)).toBe("java.lang.NullPointerException");
    expect(parseStack(F.JAVA_NPE)!.frames.map((f) => f.name)).toEqual([
      "com.acme.notify.Mailer.send",
      "com.acme.notify.Mailer$<n>.run",
    ]);
  });

  it("gives the same top frame whatever the line numbers", () => {
    expect(topStackFrame(F.JAVA_SPRING.replace(/\.java:\d+/g, ".java:1"))).toBe(topStackFrame(F.JAVA_SPRING));
  });
});

describe("parseStack: .NET", () => {
  it("takes the innermost exception after ---> and its frames before the end of the inner trace", () => {
    const p = parseStack(F.DOTNET)!;
    expect(p.language).toBe("dotnet");
    expect(p.chain.map((c) => c.exceptionClass)).toEqual([
      "System.InvalidOperationException",
      "System.TimeoutException",
    ]);
    expect(p.frames.map((f) => f.name)).toEqual([
      "Npgsql.NpgsqlConnector.ReadMessage",
      "Acme.Orders.OrderRepository.SaveAsync",
      "Acme.Orders.OrderHandler.Handle.<lambda>",
    ]);
    expect(topStackFrame(F.DOTNET)).toBe("Acme.Orders.OrderRepository.SaveAsync");
    expect(rootCauseOf(F.DOTNET)?.message).toBe("The operation has timed out after 00:00:30.");
    expect(exceptionClassFromStack(F.DOTNET)).toBe("System.InvalidOperationException");
  });

  it("reads constructors and generic frames", () => {
    expect(exceptionClassFromStack(F.DOTNET_SIMPLE)).toBe("System.ArgumentNullException");
    expect(topStackFrame(F.DOTNET_SIMPLE)).toBe("Acme.Billing.Invoice..ctor");
  });
});

describe("parseStack: Python", () => {
  it("takes the innermost application frame of a single traceback", () => {
    expect(topStackFrame(F.PYTHON)).toBe("consumer/handlers.py in process");
    expect(exceptionClassFromStack(F.PYTHON)).toBe("KeyError");
    expect(rootCauseOf(F.PYTHON)).toEqual({ exceptionClass: "KeyError", message: "'amount'", depth: 1 });
  });

  it("treats the first traceback of a chain as the root cause", () => {
    const p = parseStack(F.PYTHON_CHAINED)!;
    expect(p.chain.map((c) => c.exceptionClass)).toEqual(["workers.payments.PaymentError", "TimeoutError"]);
    expect(exceptionClassFromStack(F.PYTHON_CHAINED)).toBe("workers.payments.PaymentError");
    // Every root frame is library code: fall back to the innermost one.
    expect(topStackFrame(F.PYTHON_CHAINED)).toBe("socket.py in readinto");
  });
});

describe("parseStack: Node", () => {
  it("strips async and skips node:internal frames", () => {
    const p = parseStack(F.NODE)!;
    expect(p.language).toBe("node");
    expect(p.frames.map((f) => f.name)).toEqual([
      "OrderService.reserve (services/order-service.js)",
      "OrderConsumer.handle (consumers/order-consumer.js)",
    ]);
    expect(exceptionClassFromStack(F.NODE)).toBe("TypeError");
  });

  it("prefers application frames over node_modules and ignores the error's properties", () => {
    const p = parseStack(F.NODE_INTERNAL_FIRST)!;
    expect(p.frames.map((f) => f.name)).toEqual(["<anonymous> (pg-pool/index.js)", "Repo.save (db/repo.mjs)"]);
    expect(topStackFrame(F.NODE_INTERNAL_FIRST)).toBe("Repo.save (db/repo.mjs)");
    expect(p.chain).toEqual([{ exceptionClass: "Error", message: "connect ECONNREFUSED 10.0.3.7:5432" }]);
  });

  it("follows [cause]", () => {
    expect(rootCauseOf(F.NODE_CAUSE)).toEqual({
      exceptionClass: "SyntaxError",
      message: "Unexpected token } in JSON at position 12",
      depth: 2,
    });
    expect(topStackFrame(F.NODE_CAUSE)).toBe("parseBody (src/body.js)");
  });
});

describe("parseStack: Go", () => {
  it("reads a panic, skipping the runtime and the standard library", () => {
    const p = parseStack(F.GO_PANIC)!;
    expect(p.chain).toEqual([
      { exceptionClass: "panic", message: "runtime error: invalid memory address or nil pointer dereference" },
    ]);
    expect(p.frames.map((f) => [f.name, f.app])).toEqual([
      ["encoding/json.(*decodeState).object", false],
      ["github.com/acme/orders/internal/consumer.(*Handler).Handle.func<n>", true],
      ["github.com/acme/orders/internal/consumer.(*Handler).Handle", true],
    ]);
    expect(topStackFrame(F.GO_PANIC)).toBe("github.com/acme/orders/internal/consumer.(*Handler).Handle.func<n>");
    expect(exceptionClassFromStack(F.GO_PANIC)).toBe("panic");
  });

  it("reads main-package panics and drops [recovered]", () => {
    expect(topStackFrame(F.GO_PANIC_MAIN)).toBe("main.handle");
    expect(rootCauseOf(F.GO_PANIC_MAIN)?.message).toBe("order 9912 has no lines");
  });
});

describe("exceptionClassFromStack without frames", () => {
  it.each([
    ["com.foo.BarException: msg", "com.foo.BarException"],
    ["System.InvalidOperationException: msg", "System.InvalidOperationException"],
    ["ValueError: invalid literal", "ValueError"],
    ["TypeError: x is not a function", "TypeError"],
    ["panic: runtime error: index out of range [3] with length 3", "panic"],
    ["fatal error: concurrent map writes", "fatal error"],
    ["Unhandled exception. System.IO.IOException: disk full", "System.IO.IOException"],
    ["something went wrong", null],
    ["Timeout: waited", null],
    ["", null],
  ])("%s", (input, expected) => {
    expect(exceptionClassFromStack(input)).toBe(expected);
  });

  it("returns null frames for text that is no stack trace", () => {
    expect(topStackFrame("just a message")).toBeNull();
    expect(topStackFrame("")).toBeNull();
    expect(parseStack(null)).toBeNull();
  });
});

describe("parseStack reads the text without private-use characters", () => {
  // The shape checks look for their markers in the cleaned text: a private-use character inside a
  // marker (which the parsers drop) must not hide the shape.
  const split = (s: string, marker: string) => s.replace(marker, `${marker.slice(0, 3)}\uE000${marker.slice(3)}`);
  it.each([
    ["python", F.PYTHON, "Traceback"],
    ["python", F.PYTHON, 'File "'],
    ["go", F.GO_PANIC, "panic: "],
  ])("%s with a private-use character inside %s", (language, stack, marker) => {
    const parsed = parseStack(split(stack, marker));
    expect(parsed?.language).toBe(language);
    expect(parsed).toEqual(parseStack(stack));
  });
});

describe("parseStack of a stack whose lines after the first were parsed before", () => {
  // The rest of a stack is parsed once and kept; the first line (exception and message) is read
  // from each stack. Every first line, with every rest, must parse as the stack does in full.
  const restOf = (s: string) => s.slice(s.indexOf("\n"));
  const rests = [
    restOf(F.JAVA_SPRING),
    restOf(F.JAVA_ROOT_IN_TAIL),
    restOf(F.JAVA_NPE),
    "\n\tat com.acme.orders.OrderListener.onOrder(OrderListener.java:42)\n\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1662)",
    "\r\n\tat com.acme.A.b(A.java:1)\r\nCaused by: java.io.IOException: disk 7 full\r\n\tat com.acme.C.d(C.java:2)",
    "\nsecond line of the message\n\tat com.acme.A.b(A.java:1)",
    "\n\n\tat com.acme.A.b(A.java:1)",
    "\n\tat com.acme.A.b(A.java:1)\n\tSuppressed: java.lang.Exception: x\n\t\tat com.acme.E.f(E.java:3)\nCaused by: com.acme.Root: r\n\t... 1 more",
    '\n\tat com.acme.A.b(A.java:1)\n  File "app.py", line 3, in main',
    restOf(F.PYTHON),
    restOf(F.NODE),
    restOf(F.DOTNET),
    restOf(F.GO_PANIC),
  ];
  const heads = [
    "com.acme.OrderException: order 1 failed",
    "com.acme.OrderException: order 2 failed for 'x@y.z'",
    'Exception in thread "worker-3" java.lang.IllegalStateException: bad state 9',
    "SomethingBad",
    "java.lang.NullPointerException",
    "com.acme.X: private \uE000 use",
    "\uE000\uE001",
    "   ",
    "Caused by: com.acme.Y: z",
    "  [cause]: com.acme.Y: z",
    "panic: runtime error",
    "pan\uE000ic: runtime error",
    'com.acme.X: File "a.py"',
    "Traceback (most recent call last):",
    "com.acme.X: with a carriage return\r",
    "\tat com.acme.A.b(A.java:1)",
    `com.acme.X: ${"long ".repeat(600)}`,
  ];
  it("gives the full parse for every first line and rest, seen once or again", () => {
    for (let round = 0; round < 2; round++)
      for (const rest of rests)
        for (const head of heads) {
          const stack = head + rest;
          expect(parseStack(stack), JSON.stringify(stack.slice(0, 80))).toEqual(parseStackInFull(stack));
        }
  });
});
