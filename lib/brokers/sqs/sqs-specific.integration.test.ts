// SQS behaviour beyond the shared contract, on real servers: failure metadata from redrive and
// from Lambda/EventBridge-style attributes, release after reads, chained DLQs, retention checks,
// FIFO order, discovery, the in-flight limit, and what moto lacks.
import { afterAll, describe, expect, it } from "vitest";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { Letter } from "@/lib/brokers/contract/letter";
import { displayText, findHeader } from "@/lib/brokers/display";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const prop = (l: Letter, name: string) => displayText(l.properties.find((p) => p.name === name)?.value);
const kindOf = async (p: Promise<unknown>) =>
  (
    (await p.then(
      () => null,
      (e: unknown) => e,
    )) as BrokerError | null
  )?.kind;

describe("SQS adapter on ElasticMQ", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  const adapter = new SqsAdapter(
    testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix, dlqs: [{ name: `${kit.prefix}-configured-gone` }] }),
    { allManagedHeaders: MANAGED_HEADERS },
  );
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  it("reads failure metadata: source ARN, receive count, typed attributes, Lambda and EventBridge error attributes", async () => {
    const { dlq, source } = await kit.dlqByRedrive(
      [
        {
          body: text(`{"order":1}`),
          attributes: {
            exceptionClass: { DataType: "String", StringValue: "com.acme.OrderRejected" },
            errorMessage: { DataType: "String", StringValue: "order 1 has no lines" },
            amount: { DataType: "Number", StringValue: "12345678901234567890.10" },
            blob: { DataType: "Binary", BinaryValue: Uint8Array.from([0, 255, 128]) },
            tenant: { DataType: "String.tenant", StringValue: "acme" },
          },
        },
        {
          body: text(`{"order":2}`),
          attributes: {
            ErrorCode: { DataType: "String", StringValue: "200" },
            ErrorMessage: {
              DataType: "String",
              StringValue: `{"errorType":"TypeError","errorMessage":"x is undefined"}`,
            },
            RequestID: { DataType: "String", StringValue: "req-1" },
          },
        },
        {
          body: text(`{"order":3}`),
          attributes: {
            ERROR_CODE: { DataType: "String", StringValue: "SDK_CLIENT_ERROR" },
            ERROR_MESSAGE: { DataType: "String", StringValue: "Unable to invoke target" },
            RULE_ARN: { DataType: "String", StringValue: "arn:aws:events:us-east-1:000000000000:rule/r" },
            TARGET_ARN: { DataType: "String", StringValue: "arn:aws:lambda:us-east-1:000000000000:function:f" },
          },
        },
      ],
      { maxReceiveCount: 2 },
    );
    const page = await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect(page.letters).toHaveLength(3);
    const byBody = (b: string) => page.letters.find((l) => Buffer.from(l.body).toString() === b)!;
    const app = byBody(`{"order":1}`);
    expect(app.failure).toMatchObject({
      originQueue: source,
      reason: "maxReceiveCount",
      exceptionClass: "com.acme.OrderRejected",
      exceptionMessage: "order 1 has no lines",
    });
    expect(app.failure.count).toBeGreaterThanOrEqual(3); // two receives in the source, one by this read
    expect(prop(app, "DeadLetterQueueSourceArn")).toBe(`arn:aws:sqs:us-east-1:000000000000:${source}`);
    expect(prop(app, "MD5OfBody check")).toBe("matches the body");
    expect(app.properties.find((p) => p.name === "SentTimestamp")?.value.t).toBe("timestamp");
    expect(findHeader(app.headers, "amount")).toEqual({ t: "number", v: "12345678901234567890.10" });
    expect(findHeader(app.headers, "blob")).toMatchObject({
      t: "bytes",
      v: Buffer.from([0, 255, 128]).toString("base64"),
      size: 3,
    });
    expect(findHeader(app.headers, "tenant")).toEqual({ t: "string", v: "acme" });
    expect(displayText(app.properties.find((p) => p.name === "MessageAttribute DataTypes")?.value)).toContain(
      "tenant=String.tenant",
    );
    expect(app.history).toHaveLength(1);
    expect(app.history[0]).toMatchObject({ queue: source, reason: "maxReceiveCount" });

    const lambda = byBody(`{"order":2}`);
    expect(lambda.failure).toMatchObject({ exceptionClass: "TypeError", originQueue: source });
    expect(prop(lambda, "error attributes from")).toMatch(/Lambda/);
    const events = byBody(`{"order":3}`);
    expect(events.failure).toMatchObject({
      exceptionClass: "SDK_CLIENT_ERROR",
      exceptionMessage: "Unable to invoke target",
    });
    expect(prop(events, "error attributes from")).toMatch(/EventBridge/);
  });

  it("gives every letter back at once: nothing stays in flight after a browse, a stream or a lookup", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((i) => ({ body: text(`r-${i}`) })),
    );
    const inFlight = async () =>
      Number(
        (
          await kit.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: dlqUrl,
              AttributeNames: ["ApproximateNumberOfMessagesNotVisible"],
            }),
          )
        ).Attributes!.ApproximateNumberOfMessagesNotVisible,
      );
    const page = await adapter.browse(dlq, { offset: 2, limit: 3 });
    expect(page.letters.map((l) => l.position)).toEqual([2, 3, 4]);
    expect(page.hasMore).toBe(true);
    expect(await inFlight()).toBe(0);
    let n = 0;
    for await (const l of adapter.stream(dlq)) {
      n++;
      if (n === 5) {
        expect(l.position).toBe(4);
        break; // broken off: everything read so far is released
      }
    }
    expect(await inFlight()).toBe(0);
    const all = await adapter.browse(dlq, { offset: 0, limit: 20 });
    expect(all.letters).toHaveLength(12);
    expect(all.hasMore).toBe(false);
    const got = await adapter.getLetter(dlq, all.letters[7].id);
    expect(got?.id).toBe(all.letters[7].id);
    expect(got?.position).toBe(7);
    expect(await inFlight()).toBe(0);
    expect((await adapter.describeDlq(dlq)).depth).toBe(12);

    const ac = new AbortController();
    ac.abort();
    const aborted = await adapter.browse(dlq, { offset: 0, limit: 5, signal: ac.signal });
    expect(aborted.letters.length).toBeLessThanOrEqual(5);
    expect(await inFlight()).toBe(0);
  });

  it("asks before reading a chained DLQ (one with its own redrive policy)", async () => {
    const next = await kit.queue(kit.name("next"));
    const { dlq } = await kit.dlqByRedrive([{ body: text("chained") }], {
      dlqAttributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: next.arn, maxReceiveCount: 5 }) },
    });
    const s = await adapter.describeDlq(dlq);
    expect(s.readRisk).toMatchObject({ kind: "chained-dlq", limit: 5 });
    expect(s.readRisk!.message).toContain(next.name);
    expect(s.readRisk!.message).toMatch(/ApproximateReceiveCount/);
    const e = await adapter.browse(dlq, { offset: 0, limit: 1 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).code).toBe("confirmation_required:read");
    expect(await kindOf(adapter.getLetter(dlq, "abc"))).toBe("risky_read");
    expect((await adapter.browse(dlq, { offset: 0, limit: 1, acceptRisk: true })).letters).toHaveLength(1);
  });

  it("states sources and maxReceiveCount; ElasticMQ does not report retention, so nothing is guessed", async () => {
    const { dlq, source } = await kit.dlqByRedrive([{ body: text("x") }], {
      maxReceiveCount: 2,
      dlqAttributes: { MessageRetentionPeriod: "3600" },
      sourceAttributes: { MessageRetentionPeriod: "1209600" },
    });
    const s = await adapter.describeDlq(dlq);
    expect(s.queueType).toBe("standard");
    expect(s.origins).toEqual([source]);
    expect(displayText(s.facts.find((f) => f.name.startsWith("source queues"))?.value)).toContain("maxReceiveCount 2");
    expect(displayText(s.facts.find((f) => f.name.startsWith("retention"))?.value)).toMatch(/not reported/);
    expect(s.warnings.map((w) => w.code)).not.toContain("retention_shorter_than_source");
    expect(displayText(s.facts.find((f) => f.name === "age of the oldest letter")?.value)).toMatch(/not known/);
    // A read that covered the whole queue makes the oldest letter's age known.
    await adapter.browse(dlq, { offset: 0, limit: 10 });
    const after = await adapter.describeDlq(dlq);
    expect(after.facts.some((f) => f.name.startsWith("oldest letter sent"))).toBe(true);
  });

  it("FIFO: MessageGroupId as ordering key, SequenceNumber order, FIFO attributes", async () => {
    const letters = [0, 1, 2, 3].map((i) => ({
      body: text(`fifo-${i}`),
      groupId: i % 2 ? "customer-b" : "customer-a",
    }));
    const { dlq } = await kit.dlqByRedrive(letters, { fifo: true });
    const s = await adapter.describeDlq(dlq);
    expect(s.queueType).toBe("fifo");
    const page = await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect(page.letters).toHaveLength(4);
    for (const l of page.letters) {
      expect(l.orderingKey).toMatch(/^customer-[ab]$/);
      expect(prop(l, "MessageGroupId")).toBe(l.orderingKey);
      expect(prop(l, "MessageDeduplicationId")).toBeTruthy();
      expect(prop(l, "SequenceNumber")).toMatch(/^\d+$/);
    }
    const seq = page.letters.map((l) => BigInt(prop(l, "SequenceNumber")!));
    expect([...seq].sort((a, b) => (a < b ? -1 : 1))).toEqual(seq);
    expect(
      page.letters.filter((l) => l.orderingKey === "customer-a").map((l) => Buffer.from(l.body).toString()),
    ).toEqual(["fifo-0", "fifo-2"]);
  });

  it("discovers DLQs by redrive policy, flags a configured queue that is gone, refuses a queue that is no DLQ", async () => {
    const { dlq, source } = await kit.dlqByRedrive([{ body: text("d") }]);
    const plain = await kit.queue(kit.name("plain"));
    const list = await adapter.listDlqs();
    const found = list.find((d) => d.name === dlq)!;
    expect(found).toMatchObject({ source: "discovered", origins: [source], kind: "sqs", inFlight: 0 });
    expect(list.some((d) => d.name === source || d.name === plain.name)).toBe(false);
    expect(list.find((d) => d.name === `${kit.prefix}-configured-gone`)?.warnings[0].code).toBe("missing");
    expect(await kindOf(adapter.describeDlq(plain.name))).toBe("not_found");
  });

  it("refuses a page that would push the queue past the in-flight limit", async () => {
    const { dlq } = await kit.dlqByRedrive([1, 2, 3].map((i) => ({ body: text(`f-${i}`) })));
    // A margin that leaves room for two letters under the 120,000 limit stands in for a busy queue.
    const tight = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
      allManagedHeaders: MANAGED_HEADERS,
      inFlightMargin: 119_998,
    });
    try {
      const e = await tight.browse(dlq, { offset: 0, limit: 3 }).catch((x: unknown) => x);
      expect((e as BrokerError).kind).toBe("throttled");
      expect((e as BrokerError).userMessage).toMatch(/in flight/);
      expect((await tight.browse(dlq, { offset: 0, limit: 2 })).letters).toHaveLength(2);
    } finally {
      await tight.close();
    }
  });

  it("a queue deleted after discovery is not_found on read", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive([{ body: text("bye") }]);
    await adapter.describeDlq(dlq);
    await kit.sqs.send(new (await import("@aws-sdk/client-sqs")).DeleteQueueCommand({ QueueUrl: dlqUrl }));
    expect(await kindOf(adapter.browse(dlq, { offset: 0, limit: 1 }))).toBe("not_found");
  });

  it("ElasticMQ supports message move tasks (the nativeBulkMove flag is true)", async () => {
    const { dlq } = await kit.dlqByRedrive([{ body: text("m") }]);
    expect(adapter.capabilities.nativeBulkMove).toBe(true);
    expect(await adapter.supportsMessageMoveTasks(dlq)).toBe(true);
  });
});

describe("SQS adapter on moto (what it lacks is declared, not faked)", () => {
  const kit = new SqsKit(MOTO_ENDPOINT);
  const adapter = new SqsAdapter(testConfig(MOTO_ENDPOINT, { queueNamePrefix: kit.prefix, messageMoveTasks: false }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  it("has no message move tasks: the flag is false and the server really refuses them", async () => {
    const { dlq } = await kit.dlqByRedrive([{ body: text("m") }]);
    expect(adapter.capabilities.nativeBulkMove).toBe(false);
    expect(await adapter.supportsMessageMoveTasks(dlq)).toBe(false);
  });

  it("without DeadLetterQueueSourceArn, the origin is the only source queue (ListDeadLetterSourceQueues)", async () => {
    const { dlq, source } = await kit.dlqByRedrive([
      { body: text("o"), headers: { "exception-class": "java.io.IOException" } },
    ]);
    const [l] = (await adapter.browse(dlq, { offset: 0, limit: 1 })).letters;
    expect(prop(l, "DeadLetterQueueSourceArn")).toBeNull();
    expect(l.failure).toMatchObject({
      originQueue: source,
      reason: "maxReceiveCount",
      exceptionClass: "java.io.IOException",
    });
  });

  it("warns when the DLQ keeps letters for less time than a source, and states sources and maxReceiveCount", async () => {
    const { dlq, source } = await kit.dlqByRedrive([{ body: text("x") }], {
      maxReceiveCount: 2,
      dlqAttributes: { MessageRetentionPeriod: "3600" },
      sourceAttributes: { MessageRetentionPeriod: "1209600" },
    });
    const s = await adapter.describeDlq(dlq);
    expect(s.queueType).toBe("standard");
    expect(s.origins).toEqual([source]);
    expect(s.warnings.map((w) => w.code)).toContain("retention_shorter_than_source");
    expect(s.warnings.find((w) => w.code === "retention_shorter_than_source")!.message).toMatch(
      /original enqueue time/,
    );
    const sources = s.facts.find((f) => f.name.startsWith("source queues"));
    expect(displayText(sources?.value)).toContain("maxReceiveCount 2");
    expect(displayText(s.facts.find((f) => f.name.startsWith("retention"))?.value)).toMatch(/^1 h \(3600 s\)/);
    await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect((await adapter.describeDlq(dlq)).facts.some((f) => f.name.startsWith("oldest letter expires"))).toBe(true);
  });
});
