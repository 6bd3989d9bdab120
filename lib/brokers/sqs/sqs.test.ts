import { describe, expect, it } from "vitest";
import type { Message } from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { mapSqsError } from "@/lib/brokers/sqs/errors";
import {
  attributeValue,
  baseIdOf,
  compareKeys,
  isSqsLetterId,
  md5Hex,
  queueNameOfArn,
  sortKeyOf,
  toLetter,
} from "@/lib/brokers/sqs/letter";
import { buildSummary, chainedRisk, parseRedrivePolicy, type SummaryInput } from "@/lib/brokers/sqs/summary";
import { credentialsFor, isLoopbackEndpoint } from "@/lib/brokers/sqs/client";
import { sqsBodyOf, testConfig } from "@/lib/brokers/sqs/test-kit";
import {
  dlqOfSafeQueueName,
  isValidQueueName,
  safeMovePermissions,
  safeQueueAttributes,
  safeQueueNameOf,
} from "@/lib/brokers/sqs/safe-move";

const ctx = { endpoint: "http://127.0.0.1:9324", queue: "orders-dlq" };
const sdkError = (name: string, status?: number, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status }, ...extra });

describe("mapSqsError", () => {
  it.each([
    ["InvalidClientTokenId", 403, "auth"],
    ["SignatureDoesNotMatch", 403, "auth"],
    ["AccessDenied", 403, "auth"],
    ["CredentialsProviderError", undefined, "auth"],
    ["QueueDoesNotExist", 400, "not_found"],
    ["AWS.SimpleQueueService.NonExistentQueue", 400, "not_found"],
    ["ThrottlingException", 400, "throttled"],
    ["RequestThrottled", 403, "throttled"],
    ["OverLimit", 403, "throttled"],
    ["TimeoutError", undefined, "unreachable"],
    ["InternalError", 500, "unreachable"],
    ["InvalidParameterValue", 400, "bad_request"],
    ["SyntaxError", 500, "protocol"],
  ] as const)("%s → %s", (name, status, kind) => {
    const e = mapSqsError(sdkError(name, status), ctx);
    expect(e).toBeInstanceOf(BrokerError);
    expect(e.kind).toBe(kind);
    expect(e.userMessage).not.toContain("happened"); // the raw SDK text stays in the log
  });

  it("maps network errors by code, and the query-protocol error code", () => {
    expect(
      mapSqsError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }), ctx).kind,
    ).toBe("unreachable");
    expect(mapSqsError(Object.assign(new Error("getaddrinfo"), { code: "ENOTFOUND" }), ctx).code).toBe(
      "unavailable:broker",
    );
    expect(mapSqsError(sdkError("Unknown", 400, { Code: "AWS.SimpleQueueService.NonExistentQueue" }), ctx).kind).toBe(
      "not_found",
    );
    expect(mapSqsError(sdkError("OverLimit", 403), ctx).userMessage).toMatch(/in-flight/);
  });
});

describe("letters", () => {
  const msg = (over: Partial<Message> = {}): Message => ({
    MessageId: "0f1e2d3c-aaaa-bbbb-cccc-000000000001",
    ReceiptHandle: "rh",
    Body: `{"n":1}`,
    MD5OfBody: md5Hex(Buffer.from(`{"n":1}`)),
    Attributes: {
      SentTimestamp: "1700000000000",
      ApproximateReceiveCount: "4",
      DeadLetterQueueSourceArn: "arn:aws:sqs:eu-west-1:123456789012:orders",
    },
    MessageAttributes: {
      price: { DataType: "Number", StringValue: "0.10000000000000000001" },
      raw: { DataType: "Binary.proto", BinaryValue: Uint8Array.from([1, 2, 255]) },
      "exception-class": { DataType: "String", StringValue: "com.acme.Boom" },
    },
    ...over,
  });
  const opts = { soleSource: null, configOrigin: null };

  it("decodes typed attributes exactly and reads the failure", () => {
    const l = toLetter(msg(), "x", 0, opts);
    expect(attributeValue({ DataType: "Number", StringValue: "12345678901234567890" })).toEqual({
      t: "number",
      v: "12345678901234567890",
    });
    expect(l.headers.find((h) => h.name === "price")?.value).toEqual({ t: "number", v: "0.10000000000000000001" });
    expect(l.headers.find((h) => h.name === "raw")?.value).toMatchObject({ t: "bytes", size: 3 });
    expect(l.failure).toMatchObject({
      originQueue: "orders",
      reason: "maxReceiveCount",
      count: 4,
      exceptionClass: "com.acme.Boom",
    });
    expect(l.warnings).toBeUndefined();
  });

  it("says when it was sent and whether SQS recorded its dead-lettering, and that the read raised its count", () => {
    const sentMs = Date.now() - 3_600_000; // relative to now, never a fixed day
    const sent = new Date(sentMs).toISOString();
    const standard = toLetter(
      msg({ Attributes: { ...msg().Attributes, SentTimestamp: String(sentMs) } }),
      "x",
      0,
      opts,
    );
    // A standard queue keeps the first send's SentTimestamp: the move to the DLQ is not recorded.
    expect(standard.failure.deadLetteredAt).toBeNull();
    expect(standard.retentionFrom).toBe(sent);
    expect(standard.properties.find((p) => p.name === "sent")?.value).toEqual({ t: "timestamp", v: sent });
    expect(standard.properties.find((p) => p.name === "dead-lettered")?.value).toMatchObject({
      v: expect.stringMatching(/^not recorded by SQS/),
    });
    expect(standard.readRaised).toEqual({ field: "count", by: 1 });
    // A FIFO DLQ's move resets SentTimestamp: that is the dead-lettering, and the send is unknown.
    const fifo = toLetter(
      msg({
        Attributes: { ...msg().Attributes, SentTimestamp: String(sentMs), MessageGroupId: "g", SequenceNumber: "1" },
      }),
      "x",
      0,
      opts,
    );
    expect(fifo.failure.deadLetteredAt).toBe(sent);
    expect(fifo.history[0].time).toBe(sent);
    expect(fifo.properties.find((p) => p.name === "sent")?.value).toMatchObject({
      v: expect.stringMatching(/^not recorded/),
    });
    // A letter sent straight into a FIFO queue (no redrive by SQS): its SentTimestamp is a send.
    const direct = toLetter(msg({ Attributes: { SentTimestamp: String(sentMs), MessageGroupId: "g" } }), "x", 0, opts);
    expect(direct.failure.deadLetteredAt).toBeNull();
    expect(direct.properties.find((p) => p.name === "sent")?.value).toEqual({ t: "timestamp", v: sent });
  });

  it("an MD5 mismatch is a warning on the letter, not a failure", () => {
    const l = toLetter(msg({ MD5OfBody: "00000000000000000000000000000000" }), "x", 0, opts);
    expect(l.warnings?.[0].code).toBe("md5_mismatch");
    expect(l.properties.find((p) => p.name === "MD5OfBody check")?.value).toMatchObject({
      v: expect.stringMatching(/^MISMATCH/),
    });
  });

  it("keeps a base64-looking body as text bytes, and cuts to maxBodyBytes with the whole size and hash", () => {
    const b64 = "SGVsbG8gd29ybGQ=";
    const l = toLetter(msg({ Body: b64, MD5OfBody: undefined }), "x", 0, { ...opts, maxBodyBytes: 4 });
    expect(Buffer.from(l.body).toString()).toBe("SGVs");
    expect(l.bodySize).toBe(b64.length);
    expect(l.bodyTruncated).toBe(true);
  });

  it("recognises Lambda and EventBridge error attributes", () => {
    const lambda = toLetter(
      msg({
        Attributes: {},
        MessageAttributes: {
          ErrorCode: { DataType: "String", StringValue: "200" },
          ErrorMessage: { DataType: "String", StringValue: "Task timed out after 3.00 seconds" },
          RequestID: { DataType: "String", StringValue: "r" },
        },
      }),
      "x",
      0,
      opts,
    );
    expect(lambda.failure).toMatchObject({
      reason: "lambda-async-failure",
      exceptionClass: "Lambda error 200",
      exceptionMessage: "Task timed out after 3.00 seconds",
    });
    const eb = toLetter(
      msg({
        Attributes: {},
        MessageAttributes: {
          ERROR_CODE: { DataType: "String", StringValue: "NO_PERMISSIONS" },
          ERROR_MESSAGE: { DataType: "String", StringValue: "denied" },
          RULE_ARN: { DataType: "String", StringValue: "arn" },
        },
      }),
      "x",
      0,
      opts,
    );
    expect(eb.failure).toMatchObject({
      reason: "eventbridge-target-failure",
      exceptionClass: "NO_PERMISSIONS",
      exceptionMessage: "denied",
    });
  });

  it("ids are URL-safe and orders are FIFO sequence, else SentTimestamp then MessageId", () => {
    expect(baseIdOf("abc-123")).toBe("abc-123");
    expect(baseIdOf("a/b c")).toMatch(/^m\./);
    expect(isSqsLetterId("abc-123~2")).toBe(true);
    expect(isSqsLetterId("../etc")).toBe(false);
    const k = (seq: string | null, sent: number, id: string) => ({ seq, sent, messageId: id });
    expect(compareKeys(k("9", 5, "b"), k("10", 1, "a"))).toBeLessThan(0);
    expect(compareKeys(k(null, 1, "b"), k(null, 1, "a"))).toBeGreaterThan(0);
    expect(sortKeyOf(msg()).sent).toBe(1_700_000_000_000);
    expect(queueNameOfArn("arn:aws:sqs:us-east-1:000000000000:q.fifo")).toBe("q.fifo");
  });
});

describe("summaries", () => {
  const base: SummaryInput = {
    connectionId: "c",
    name: "orders-dlq",
    attrs: {
      ApproximateNumberOfMessages: "7",
      ApproximateNumberOfMessagesNotVisible: "2",
      MessageRetentionPeriod: "86400",
    },
    sources: [
      {
        name: "orders",
        attrs: {
          MessageRetentionPeriod: "345600",
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:r:1:orders-dlq", maxReceiveCount: "3" }),
        },
      },
    ],
    sourcesTruncated: false,
    configOrigin: null,
    source: "discovered",
    readVisibilitySeconds: 30,
    nativeBulkMove: true,
    oldestSeen: null,
    now: 0,
  };
  it("warns when the DLQ keeps letters for less time than a source, and only for reported retentions", () => {
    const s = buildSummary(base);
    expect(s).toMatchObject({ depth: 7, inFlight: 2, queueType: "standard", origins: ["orders"], readRisk: null });
    expect(s.warnings.map((w) => w.code)).toEqual(["retention_shorter_than_source"]);
    expect(buildSummary({ ...base, attrs: { ApproximateNumberOfMessages: "7" } }).warnings).toEqual([]);
  });
  it("a DLQ with its own redrive policy is a chained-dlq read risk; no source is a warning", () => {
    const attrs = {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:aws:sqs:r:1:last-resort", maxReceiveCount: 10 }),
    };
    expect(chainedRisk("d", attrs)).toMatchObject({
      kind: "chained-dlq",
      limit: 10,
      onwardQueue: "last-resort",
      countField: "count",
    });
    expect(parseRedrivePolicy("not json")).toBeNull();
    expect(buildSummary({ ...base, sources: [] }).warnings.map((w) => w.code)).toEqual(["no_source"]);
  });
  it("a FIFO DLQ deeper than one receive's worth says a read sees at most ten letters of each group", () => {
    const fifo = (n: number) =>
      buildSummary({
        ...base,
        name: "ledger-dlq.fifo",
        attrs: { FifoQueue: "true", ApproximateNumberOfMessages: String(n) },
      });
    expect(fifo(10).warnings).toEqual([]);
    const w = fifo(11).warnings;
    expect(w.map((x) => x.code)).toEqual(["fifo_group_read_limit"]);
    expect(w[0].message).toMatch(/at most the first 10 letters of each group/);
    expect(
      buildSummary({ ...base, attrs: { ApproximateNumberOfMessages: "500" } }).warnings.map((x) => x.code),
    ).not.toContain("fifo_group_read_limit");
  });
});

describe("credentials and fixture bodies", () => {
  it("static keys only from env; placeholder keys only for a loopback emulator", () => {
    expect(isLoopbackEndpoint("http://127.0.0.1:9324")).toBe(true);
    expect(isLoopbackEndpoint("https://sqs.eu-west-1.amazonaws.com")).toBe(false);
    expect(credentialsFor(testConfig("http://127.0.0.1:9324"))).toEqual({
      accessKeyId: "test",
      secretAccessKey: "test",
    });
    expect(credentialsFor(testConfig("https://vpce.example.com"))).toBeUndefined();
    expect(
      credentialsFor(
        testConfig("https://vpce.example.com", { accessKeyIdEnv: undefined, secretAccessKeyEnv: undefined }),
      ),
    ).toBeUndefined();
  });
  it("refuses bodies SQS cannot carry instead of re-encoding them", () => {
    expect(() => sqsBodyOf(Uint8Array.from([0xc3, 0x28]))).toThrow(/UTF-8/);
    expect(() => sqsBodyOf(Uint8Array.from([0x41, 0x00]))).toThrow(/refuses/);
    expect(sqsBodyOf(Buffer.from("\uFEFFok", "utf8"))).toBe("\uFEFFok");
  });
});

describe("move to safety (pure parts)", () => {
  it("names the safe queue <dlq>-safe, FIFO <base>-safe.fifo, and maps it back", () => {
    expect(safeQueueNameOf("orders-dlq")).toBe("orders-dlq-safe");
    expect(safeQueueNameOf("orders-dlq.fifo")).toBe("orders-dlq-safe.fifo");
    expect(dlqOfSafeQueueName("orders-dlq-safe")).toBe("orders-dlq");
    expect(dlqOfSafeQueueName("orders-dlq-safe.fifo")).toBe("orders-dlq.fifo");
    expect(dlqOfSafeQueueName("orders-dlq")).toBeNull();
    expect(dlqOfSafeQueueName("-safe")).toBeNull();
    expect(isValidQueueName(safeQueueNameOf("a".repeat(75)))).toBe(true);
    expect(isValidQueueName(safeQueueNameOf("a".repeat(76)))).toBe(false);
    expect(isValidQueueName("has space")).toBe(false);
  });
  it("a safe queue copies retention, size, encryption and FIFO settings, never a redrive policy", () => {
    const dlq = {
      MessageRetentionPeriod: "1209600",
      MaximumMessageSize: "262144",
      SqsManagedSseEnabled: "true",
      RedrivePolicy: "{}",
      VisibilityTimeout: "30",
      FifoQueue: "true",
      ContentBasedDeduplication: "true",
    };
    expect(safeQueueAttributes(dlq, false)).toEqual({
      MessageRetentionPeriod: "1209600",
      MaximumMessageSize: "262144",
      SqsManagedSseEnabled: "true",
    });
    expect(safeQueueAttributes(dlq, true)).toEqual({
      MessageRetentionPeriod: "1209600",
      MaximumMessageSize: "262144",
      SqsManagedSseEnabled: "true",
      FifoQueue: "true",
      ContentBasedDeduplication: "true",
    });
    expect(safeQueueAttributes({ KmsMasterKeyId: "alias/k", SqsManagedSseEnabled: "false" }, false)).toEqual({
      KmsMasterKeyId: "alias/k",
    });
  });
  it("lists the IAM actions, KMS ones only for a KMS-encrypted DLQ", () => {
    const p = safeMovePermissions("d", "d-safe", {}).join("\n");
    for (const a of [
      "sqs:GetQueueAttributes",
      "sqs:CreateQueue",
      "sqs:StartMessageMoveTask",
      "sqs:ListMessageMoveTasks",
      "sqs:CancelMessageMoveTask",
      "sqs:ReceiveMessage",
      "sqs:DeleteMessage",
      "sqs:SendMessage",
    ])
      expect(p).toContain(a);
    expect(p).not.toContain("kms:");
    expect(safeMovePermissions("d", "d-safe", { KmsMasterKeyId: "alias/k" }).join("\n")).toMatch(
      /kms:Decrypt.*alias\/k/,
    );
  });
  it("a safe copy has the DLQ's origins, says whose copy it is, and no no_source warning", () => {
    const s = buildSummary({
      connectionId: "c",
      name: "orders-dlq-safe",
      attrs: { ApproximateNumberOfMessages: "8" },
      sources: [],
      sourcesTruncated: false,
      configOrigin: null,
      source: "discovered",
      readVisibilitySeconds: 30,
      nativeBulkMove: true,
      oldestSeen: null,
      now: 0,
      safeCopyOf: { dlq: "orders-dlq", origins: ["orders"] },
    });
    expect(s).toMatchObject({ origins: ["orders"], readRisk: null, depth: 8 });
    expect(s.warnings).toEqual([]);
    expect(s.facts.find((f) => f.name === "safe copy")?.value).toEqual({
      t: "string",
      v: "safe copy of orders-dlq, made by the console's move to safety",
    });
  });
});
