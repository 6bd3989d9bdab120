import { describe, expect, it } from "vitest";
import {
  classify,
  DEFAULT_CLASSIFICATION_RULES,
  validateRule,
  validateRules,
  type ClassificationRule,
} from "./classify";
import { normalizeMessage } from "./normalize";
import { compileSafeRegex } from "@/lib/safe-regex";
import * as fixtures from "./fixtures.test-data";

const c = (exceptionClass: string | null, exceptionMessage: string | null = null, reason: string | null = null) =>
  classify({ exceptionClass, exceptionMessage, reason });

describe("classify with the default rules", () => {
  // [rule, class, message]: realistic failures from Java, .NET, Python, Node, Go and the brokers.
  const cases: Array<[string, string | null, string | null]> = [
    ["transient.timeout", "java.net.SocketTimeoutException", "Read timed out"],
    ["transient.timeout", "System.TimeoutException", "The operation has timed out."],
    ["transient.timeout", "panic", "context deadline exceeded"],
    ["transient.timeout", "Error", "ETIMEDOUT"],
    ["transient.connection", "Error", "connect ECONNREFUSED 10.0.3.7:5432"],
    ["transient.connection", "java.net.ConnectException", "Connection refused"],
    ["transient.connection", "ConnectionResetError", "[Errno 104] Connection reset by peer"],
    ["transient.connection", "Error", "socket hang up"],
    [
      "transient.http-unavailable",
      "org.springframework.web.client.HttpServerErrorException$ServiceUnavailable",
      "503 Service Unavailable",
    ],
    ["transient.http-unavailable", "com.acme.GatewayError", "upstream returned HTTP 502"],
    ["transient.http-unavailable", "Error", "Request failed with status code 504"],
    ["transient.throttled", "Error", "Request failed with status code 429"],
    [
      "transient.throttled",
      "com.amazonaws.services.dynamodbv2.model.ProvisionedThroughputExceededException",
      "The level of configured provisioned throughput for the table was exceeded",
    ],
    [
      "transient.throttled",
      "botocore.exceptions.ClientError",
      "An error occurred (ThrottlingException) when calling the PutItem operation: Rate exceeded",
    ],
    ["transient.lock", "org.postgresql.util.PSQLException", "ERROR: deadlock detected"],
    [
      "transient.lock",
      "com.mysql.cj.jdbc.exceptions.MySQLTransactionRollbackException",
      "Lock wait timeout exceeded; try restarting transaction",
    ],
    [
      "transient.lock",
      "org.springframework.orm.ObjectOptimisticLockingFailureException",
      "Row was updated or deleted by another transaction",
    ],
    ["transient.lock", "psycopg2.errors.SerializationFailure", "could not serialize access due to concurrent update"],
    [
      "transient.unavailable",
      "org.apache.kafka.common.errors.NotLeaderOrFollowerException",
      "LeaderNotAvailable for partition orders-3",
    ],
    ["transient.unavailable", "Microsoft.Azure.ServiceBus.ServerBusyException", "The server is busy"],
    ["transient.unavailable", "redis.exceptions.BusyLoadingError", "Resource temporarily unavailable"],
    ["permanent.null-dereference", "java.lang.NullPointerException", null],
    [
      "permanent.null-dereference",
      "System.NullReferenceException",
      "Object reference not set to an instance of an object.",
    ],
    ["permanent.null-dereference", "TypeError", "Cannot read properties of undefined (reading 'sku')"],
    ["permanent.null-dereference", "panic", "runtime error: invalid memory address or nil pointer dereference"],
    ["permanent.null-dereference", "AttributeError", "'NoneType' object has no attribute 'id'"],
    [
      "permanent.deserialization",
      "com.fasterxml.jackson.databind.exc.MismatchedInputException",
      "Cannot deserialize value of type `int`",
    ],
    ["permanent.deserialization", "json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"],
    ["permanent.deserialization", "SyntaxError", "Unexpected token } in JSON at position 12"],
    ["permanent.deserialization", "org.apache.kafka.common.errors.SerializationException", "Unknown magic byte!"],
    ["permanent.validation", "jakarta.validation.ConstraintViolationException", "amount: must not be null"],
    ["permanent.validation", "pydantic_core._pydantic_core.ValidationError", "1 validation error for Order"],
    ["permanent.validation", "com.networknt.schema.JsonSchemaException", "$.id: is missing but it is required"],
    ["permanent.constraint", "org.springframework.dao.DataIntegrityViolationException", "could not execute statement"],
    [
      "permanent.constraint",
      "Npgsql.PostgresException",
      '23505: duplicate key value violates unique constraint "orders_pkey"',
    ],
    [
      "permanent.constraint",
      "sqlalchemy.exc.IntegrityError",
      "(psycopg2.errors.ForeignKeyViolation) insert or update violates foreign key",
    ],
    [
      "permanent.illegal-argument",
      "java.lang.IllegalArgumentException",
      "No enum constant com.acme.Status.SHIPPED_LATE",
    ],
    [
      "permanent.illegal-argument",
      "System.ArgumentOutOfRangeException",
      "Specified argument was out of the range of valid values.",
    ],
    ["permanent.illegal-argument", "ValueError", "invalid literal for int() with base 10: 'x'"],
    ["permanent.unsupported", "java.lang.UnsupportedOperationException", null],
    ["permanent.unsupported", "com.acme.RoutingException", "Unknown event type order.archived"],
    ["permanent.unsupported", "System.InvalidCastException", "Unable to cast object of type 'A' to type 'B'."],
    [
      "permanent.http-client-error",
      "org.springframework.web.client.HttpClientErrorException$BadRequest",
      "400 Bad Request",
    ],
    ["permanent.http-client-error", "Error", "Request failed with status code 422"],
  ];

  it.each(cases)("%s: %s: %s", (ruleId, cls, msg) => {
    const expected = { disposition: ruleId.split(".")[0], ruleId };
    expect(c(cls, msg)).toEqual(expected);
    // Rules are meant for the group's normalised message as well as a raw one.
    expect(c(cls, msg === null ? null : normalizeMessage(msg))).toEqual(expected);
  });

  it("covers every default rule", () => {
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(DEFAULT_CLASSIFICATION_RULES.map((r) => r.id)));
  });

  it("says unknown when nothing matches", () => {
    expect(c("com.acme.InsufficientFundsException", "balance too low for order 12")).toEqual({
      disposition: "unknown",
      ruleId: null,
    });
    expect(c(null, null)).toEqual({ disposition: "unknown", ruleId: null });
    expect(c(null, null, "rejected")).toEqual({ disposition: "unknown", ruleId: null });
  });

  it("trusts the class over words in the message", () => {
    expect(
      c("java.lang.NullPointerException", 'Cannot invoke "Duration.toMillis()" because "timeout" is null').ruleId,
    ).toBe("permanent.null-dereference");
    expect(c("com.acme.ValidationException", "validation service timed out").ruleId).toBe("permanent.validation");
  });

  it("matches the broker's reason for 'any' rules", () => {
    expect(c(null, null, "connection reset by peer").ruleId).toBe("transient.connection");
  });

  it("RE2 and JavaScript's RegExp agree on the default rules and the patterns the tests use", () => {
    const texts = [
      ...cases.flatMap(([, cls, msg]) => [cls, msg, msg === null ? null : normalizeMessage(msg)]),
      "INSUFFICIENT FUNDS",
      "com.acme.InsufficientFundsException",
      "card 4111 was declined",
      "Gave up waiting after 30 s",
      "connection\t  refused",
      "connection was refused",
      "write EPIPE",
      "xEPIPE",
      "status_code=503",
      "HTTP/1.1 429 Too Many Requests",
      "response code: 422",
      "Straße timeout",
      "Lock wait timeout exceeded\nat com.acme.Repo.save",
      `${"a".repeat(40)}x${"a".repeat(60)}b`,
    ].filter((t): t is string => typeof t === "string");
    const patterns = [
      ...DEFAULT_CLASSIFICATION_RULES.map((r) => r.pattern),
      "insufficient funds",
      "Funds",
      "insufficient",
      "a.*a.{0,50}b",
      "gave up waiting",
      "FlakyThing",
      "Timeout",
      "card .* declined",
      "connection\\s+(?:was )?refused|\\bEPIPE\\b|x{2}",
    ];
    let matched = 0;
    for (const pattern of patterns) {
      const js = new RegExp(pattern, "i");
      const re2 = compileSafeRegex(pattern, { caseInsensitive: true });
      for (const t of texts) {
        expect(re2.test(t), `${pattern} on ${t}`).toBe(js.test(t));
        if (js.test(t)) matched++;
      }
    }
    expect(matched).toBeGreaterThan(cases.length * 2);
  });
});

describe("classify with custom rules", () => {
  const rules: ClassificationRule[] = [
    { id: "a", disposition: "permanent", pattern: "insufficient funds", field: "message", description: "" },
    { id: "b", disposition: "transient", pattern: "Funds", field: "class", description: "" },
    { id: "c", disposition: "transient", pattern: "insufficient", field: "message", description: "" },
  ];

  it("respects field and order, case-insensitively", () => {
    expect(classify({ exceptionClass: null, exceptionMessage: "INSUFFICIENT FUNDS" }, rules)).toEqual({
      disposition: "permanent",
      ruleId: "a",
    });
    expect(
      classify({ exceptionClass: "com.acme.InsufficientFundsException", exceptionMessage: "insufficient funds" }, rules)
        .ruleId,
    ).toBe("b");
    expect(classify({ exceptionClass: null, exceptionMessage: "insufficient stock" }, rules).ruleId).toBe("c");
    expect(classify({ exceptionClass: null, exceptionMessage: "Funds" }, rules).ruleId).toBeNull(); // "b" is for classes only
  });

  it("matches only the text's first 1,000 characters, so a huge message costs no more than its start", () => {
    const slow = validateRule({
      id: "slow",
      disposition: "transient",
      pattern: "a.*a.{0,50}b",
      field: "message",
      description: "",
    });
    // The "b" the pattern needs is past the first 1,000 characters: not read, no match.
    expect(classify({ exceptionClass: null, exceptionMessage: `${"a".repeat(5_000_000)}b` }, [slow]).ruleId).toBeNull();
    // Within them: a match, however long the rest.
    expect(classify({ exceptionClass: null, exceptionMessage: `aab${"a".repeat(5_000_000)}` }, [slow]).ruleId).toBe(
      "slow",
    );
  });
});

describe("classify with hostile rules", () => {
  const hostile: ClassificationRule[] = [
    "(?:.|.){25}#",
    "(?:a{1,2}){26}b",
    "(?:.|.){40}#",
    "(?:a{1,2}){40}b",
    "(a+)+$",
  ].map((pattern, i) =>
    validateRule({ id: `hostile.${i}`, disposition: "permanent", pattern, field: "any", description: "" }),
  );
  const withHostile = [...hostile, ...DEFAULT_CLASSIFICATION_RULES];
  // Distinct letters, so no cache helps; "#" and "b" up front so no literal prefilter skips the work.
  const letters = (length: number) =>
    Array.from({ length: 200 }, (_, i) => ({
      exceptionClass: `com.acme.E${i}`,
      exceptionMessage: `#b${"a".repeat(length)}-${i}`,
    }));
  // What they cost against the default rules alone is bench/classify.ts's (a timing goal, in CI's smoke).
  it.each([30, 1000, 100_000])("letters with %i-character messages are classified as the rules say", (length) => {
    // Past the 1000 characters classify reads, the text ends in "a"s: "(a+)+$" matches.
    const expected = length < 900 ? null : "hostile.4";
    for (const l of letters(length)) expect(classify(l, withHostile).ruleId).toBe(expected);
  });

  it("still match what they describe", () => {
    expect(classify({ exceptionClass: null, exceptionMessage: `${"x".repeat(25)}#` }, withHostile).ruleId).toBe(
      "hostile.0",
    );
    expect(classify({ exceptionClass: null, exceptionMessage: `${"a".repeat(52)}b` }, withHostile).ruleId).toBe(
      "hostile.1",
    );
  });

  it("a saved rule the engine now refuses (a lookbehind) matches nothing, and the rules after it still apply", () => {
    const saved: ClassificationRule[] = [
      { id: "old", disposition: "permanent", pattern: "(?<![a-z])EPIPE", field: "message", description: "" },
      { id: "next", disposition: "transient", pattern: "\\bEPIPE\\b", field: "message", description: "" },
    ];
    expect(classify({ exceptionClass: null, exceptionMessage: "write EPIPE" }, saved)).toEqual({
      disposition: "transient",
      ruleId: "next",
    });
  });
});

describe("validateRule", () => {
  const good = {
    id: "transient.my-timeout",
    disposition: "transient",
    pattern: "gave up waiting",
    field: "message",
    description: "Our client's timeout",
  };

  it("accepts a good rule and returns a clean copy", () => {
    expect(validateRule({ ...good, pattern: "connection\\s+(?:was )?refused|\\bEPIPE\\b|x{2}" }).pattern).toContain(
      "EPIPE",
    );
    expect(validateRule({ ...good, extra: 1 })).toEqual(good);
    for (const r of DEFAULT_CLASSIFICATION_RULES) expect(validateRule(r)).toEqual(r);
  });

  it.each([
    ["not an object", "nope", /must be an object/],
    ["an array", [], /must be an object/],
    ["a missing id", { ...good, id: undefined }, /id must be/],
    ["an id with spaces", { ...good, id: "my rule" }, /id must be/],
    ["a bad disposition", { ...good, disposition: "maybe" }, /disposition/],
    ["a bad field", { ...good, field: "payload" }, /field/],
    ["a missing description", { ...good, description: undefined }, /description/],
    ["an empty pattern", { ...good, pattern: " " }, /non-empty/],
    ["an invalid regex", { ...good, pattern: "(unclosed" }, /not a valid regular expression/],
    ["a too long pattern", { ...good, pattern: "a".repeat(501) }, /longer than/],
    ["a lookahead", { ...good, pattern: "timeout(?!.*retried)" }, /pattern uses a lookahead "\(\?!/],
    ["a lookbehind", { ...good, pattern: "(?<![a-z])EPIPE" }, /pattern uses a lookbehind .*use \\b/],
    ["a backreference", { ...good, pattern: "(['\"]).*\\1" }, /pattern uses a backreference "\\1"/],
    ["a repeat over 1000", { ...good, pattern: "x{1001}" }, /more than 1000 times/],
    ["a pattern too large once counted out", { ...good, pattern: "(?:a{1,2}){400}b" }, /too large/],
    ["a pattern matching everything", { ...good, pattern: ".*" }, /empty string/],
    ["an empty alternative", { ...good, pattern: "timeout|" }, /empty string/],
  ])("rejects %s", (_, rule, message) => {
    expect(() => validateRule(rule)).toThrow(message);
  });

  it("names the rule in its errors", () => {
    expect(() => validateRule({ ...good, pattern: "(" })).toThrow(/Rule "transient.my-timeout"/);
    expect(() => validateRule({ ...good, pattern: "(?=x)y" })).toThrow(/^Rule "transient.my-timeout": pattern uses/);
  });

  it("accepts the patterns the old slow-regex check refused or let through: none can stall", () => {
    for (const pattern of ["(a+)+$", "(a|aa)*b", "a.*a.*b", "(?:.|.){25}#", "(?:a{1,2}){26}b", "(?:.|.){40}#"])
      expect(validateRule({ ...good, pattern }).pattern).toBe(pattern);
  });

  it("bounds the rules' total size, so a list cannot make each letter slow", () => {
    const big = (i: number) => ({ ...good, id: `big-${i}`, pattern: `(?:a{1,2}){300}b${i}` });
    expect(() => validateRules(Array.from({ length: 30 }, (_, i) => big(i)))).toThrow(
      /patterns together are too large \(\d+ steps .*at most 20000\)/,
    );
    expect(validateRules(Array.from({ length: 10 }, (_, i) => big(i)))).toHaveLength(10);
  });

  it("rejects duplicate ids in a list", () => {
    expect(() => validateRules([good, { ...good }])).toThrow(/used twice/);
    expect(() => validateRules("x")).toThrow(/must be a list/);
    expect(validateRules(DEFAULT_CLASSIFICATION_RULES)).toHaveLength(DEFAULT_CLASSIFICATION_RULES.length);
  });
});

describe("the message pass finds the rule that trying every rule in turn finds", () => {
  const compiledOnce = new Map<string, ReturnType<typeof compileSafeRegex> | null>();
  /** The oracle: every rule against the class, then every rule against message and reason, in list order. */
  function inTurn(
    input: { exceptionClass: string | null; exceptionMessage: string | null; reason?: string | null },
    rules: ClassificationRule[],
  ): string | null {
    const test = (r: ClassificationRule, text: string) => {
      if (!compiledOnce.has(r.pattern)) {
        try {
          compiledOnce.set(r.pattern, compileSafeRegex(r.pattern, { caseInsensitive: true }));
        } catch {
          compiledOnce.set(r.pattern, null); // a pattern the engine refuses matches nothing
        }
      }
      return compiledOnce.get(r.pattern)?.test(text) ?? false;
    };
    const cls = input.exceptionClass?.slice(0, 300) ?? "";
    if (cls) for (const r of rules) if ((r.field === "class" || r.field === "any") && test(r, cls)) return r.id;
    const text = [input.exceptionMessage, input.reason].filter(Boolean).join("\n").slice(0, 1000);
    if (text) for (const r of rules) if ((r.field === "message" || r.field === "any") && test(r, text)) return r.id;
    return null;
  }

  const messages = [
    ...Object.values(fixtures).map((stack) => stack.split("\n").slice(0, 3).join("\n")),
    ...DEFAULT_CLASSIFICATION_RULES.map((r) => `before ${r.description} after`),
    'ERROR: duplicate key value violates unique constraint "orders_pkey" Detail: Key (id)=(42) already exists.',
    "Read timed out after 3004 ms calling order 7",
    "status code 503 and then a deadlock, then HTTP 400",
    "nothing to see here 42",
    "Kelvin sign \u212A and long s \u017F: case folding",
    "",
  ];
  const lists: Array<[string, ClassificationRule[]]> = [
    ["the defaults", DEFAULT_CLASSIFICATION_RULES],
    ["the defaults reversed", [...DEFAULT_CLASSIFICATION_RULES].reverse()],
    [
      "a list with an inline flag, a class-only rule and a saved pattern the engine refuses",
      [
        { id: "flag", disposition: "permanent", field: "message", pattern: "(?-i)DEADLOCK|x$", description: "" },
        { id: "class-only", disposition: "permanent", field: "class", pattern: "constraint", description: "" },
        { id: "refused", disposition: "permanent", field: "any", pattern: "(?=look)ahead", description: "" },
        { id: "kelvin", disposition: "transient", field: "message", pattern: "k", description: "" },
        ...DEFAULT_CLASSIFICATION_RULES,
      ],
    ],
    ["no rules", []],
  ];
  it.each(lists)("%s", (_, rules) => {
    for (const message of messages)
      for (const reason of [null, "rejected", "expired"])
        for (const exceptionClass of [null, "com.acme.Foo", "java.lang.NullPointerException"]) {
          const input = { exceptionClass, exceptionMessage: message, reason };
          expect(classify(input, rules).ruleId, JSON.stringify(input)).toBe(inTurn(input, rules));
        }
  });
});
