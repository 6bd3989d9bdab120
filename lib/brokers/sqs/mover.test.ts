import { describe, expect, it } from "vitest";
import type { Message, MessageAttributeValue, SQSClient } from "@aws-sdk/client-sqs";
import { AppError } from "@/lib/errors";
import {
  BrokerError,
  REDRIVE_HEADERS,
  REPAIR_HEADER,
  type DlqSummary,
  type LetterCopy,
  type MoveResult,
  type RedriveMarkers,
} from "@/lib/brokers/types";
import { sha256Hex } from "@/lib/brokers/display";
import { mapSqsError } from "@/lib/brokers/sqs/errors";
import { toLetter } from "@/lib/brokers/sqs/letter";
import { COMBINED_MARKER, expandCombinedMarker, readMarkers, withMarkers } from "@/lib/brokers/sqs/markers";
import {
  dedupIdFor,
  entrySize,
  moveSqsLetters,
  moveVisibilitySeconds,
  originFor,
  parseQueueArn,
  sendEntryFor,
  type SqsMoveContext,
} from "@/lib/brokers/sqs/mover";

const marks: RedriveMarkers = {
  redriveId: "job-1",
  replayId: "11111111-2222-3333-4444-555555555555",
  redriveCount: 2,
  originalMessageId: "orig-1",
};
const attrs = (n: number): Record<string, MessageAttributeValue> =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `a${i}`,
      { DataType: "String", StringValue: `v${i}`, StringListValues: [], BinaryListValues: [] },
    ]),
  );

describe("markers within SQS's 10 message attributes", () => {
  it("6 own attributes → four separate markers (10), count as Number, list fields dropped", () => {
    const r = withMarkers(attrs(6), marks);
    if ("error" in r) throw new Error(r.error);
    expect(r.form).toBe("separate");
    expect(Object.keys(r.attributes)).toHaveLength(10);
    expect(r.attributes[REDRIVE_HEADERS.redriveCount]).toEqual({ DataType: "Number", StringValue: "2" });
    expect(r.attributes.a0).toEqual({ DataType: "String", StringValue: "v0" });
  });

  it("7 to 9 own attributes → one combined x-dlq-redrive of compact JSON", () => {
    for (const n of [7, 9]) {
      const r = withMarkers(attrs(n), marks);
      if ("error" in r) throw new Error(r.error);
      expect(r.form).toBe("combined");
      expect(Object.keys(r.attributes)).toHaveLength(n + 1);
      expect(r.attributes[COMBINED_MARKER].StringValue).toBe(
        `{"redriveId":"job-1","replayId":"11111111-2222-3333-4444-555555555555","redriveCount":2,"originalMessageId":"orig-1"}`,
      );
    }
  });

  it("old markers (either form) are replaced, not added to: a crowded letter stays at 10 across cycles", () => {
    const once = withMarkers(attrs(9), marks);
    if ("error" in once) throw new Error(once.error);
    const twice = withMarkers(once.attributes, { ...marks, redriveCount: 3 });
    if ("error" in twice) throw new Error(twice.error);
    expect(Object.keys(twice.attributes)).toHaveLength(10);
    expect(readMarkers(twice.attributes).redriveCount).toBe(3);
    const sep = withMarkers(attrs(2), marks);
    if ("error" in sep) throw new Error(sep.error);
    const sep2 = withMarkers(sep.attributes, { ...marks, redriveCount: 3 });
    if ("error" in sep2) throw new Error(sep2.error);
    expect(Object.keys(sep2.attributes)).toHaveLength(6);
  });

  it("10 own attributes → refused with a reason", () => {
    const r = withMarkers(attrs(10), marks);
    expect("error" in r && r.error).toMatch(/10 message attributes/);
  });

  it("the reader shows a combined marker as the four headers", () => {
    const r = withMarkers(attrs(9), marks);
    if ("error" in r) throw new Error(r.error);
    const msg: Message = { MessageId: "m-2", Body: "x", MessageAttributes: r.attributes, Attributes: {} };
    const l = toLetter(msg, "m-2", 0, { soleSource: null, configOrigin: null });
    const h = (n: string) => l.headers.find((x) => x.name === n)?.value;
    expect(h(REDRIVE_HEADERS.redriveCount)).toEqual({ t: "number", v: "2" });
    expect(h(REDRIVE_HEADERS.originalMessageId)).toEqual({ t: "string", v: "orig-1" });
    expect(h(COMBINED_MARKER)).toBeDefined();
    expect(expandCombinedMarker([], { [COMBINED_MARKER]: { DataType: "String", StringValue: "not json" } })).toEqual(
      [],
    );
  });
});

describe("send entries", () => {
  const msg = (over: Partial<Message> = {}): Message => ({
    MessageId: "new-id",
    Body: " exact body \r\n",
    MessageAttributes: attrs(1),
    Attributes: { AWSTraceHeader: "Root=1-abc", SentTimestamp: "1" },
    ...over,
  });

  it("keeps the body, attributes and AWSTraceHeader; the first original message id wins", () => {
    const r = sendEntryFor(
      msg({
        MessageAttributes: {
          ...attrs(1),
          [REDRIVE_HEADERS.originalMessageId]: { DataType: "String", StringValue: "first-id" },
        },
      }),
      { ...marks, originalMessageId: "new-id" },
      { name: "q", fifo: false },
      false,
    );
    if ("reason" in r) throw new Error(r.reason);
    expect(r.entry.MessageBody).toBe(" exact body \r\n");
    expect(r.entry.MessageSystemAttributes?.AWSTraceHeader?.StringValue).toBe("Root=1-abc");
    expect(r.entry.MessageAttributes?.[REDRIVE_HEADERS.originalMessageId].StringValue).toBe("first-id");
    expect(r.entry.MessageGroupId).toBeUndefined();
    expect(entrySize(r.entry)).toBeGreaterThan(14);
  });

  it("FIFO: group kept, deduplication id from the replay id; type mismatches refused", () => {
    const fifoMsg = msg({ Attributes: { MessageGroupId: "g", MessageDeduplicationId: "old" } });
    const r = sendEntryFor(fifoMsg, marks, { name: "q.fifo", fifo: true }, true);
    if ("reason" in r) throw new Error(r.reason);
    expect(r.entry).toMatchObject({ MessageGroupId: "g", MessageDeduplicationId: marks.replayId });
    expect(sendEntryFor(fifoMsg, marks, { name: "q", fifo: false }, true)).toMatchObject({
      reason: expect.stringMatching(/standard queue/),
    });
    expect(sendEntryFor(msg(), marks, { name: "q.fifo", fifo: true }, false)).toMatchObject({
      reason: expect.stringMatching(/MessageGroupId/),
    });
    expect(dedupIdFor("x".repeat(200))).toMatch(/^[0-9a-f]{64}$/);
    expect(dedupIdFor("ünï")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("origin: source ARN, else the one candidate, else pick a target", () => {
    const here = { region: "us-east-1", account: "000000000000" };
    const withArn = (arn: string): Message => ({ Attributes: { DeadLetterQueueSourceArn: arn } });
    expect(originFor(withArn("arn:aws:sqs:us-east-1:000000000000:orders"), ["a", "b"], here, "us-east-1")).toEqual({
      name: "orders",
    });
    expect(originFor(withArn("arn:aws:sqs:us-east-1:111111111111:orders"), [], here, "us-east-1")).toEqual({
      name: "orders",
      account: "111111111111",
    });
    expect(originFor(withArn("arn:aws:sqs:eu-west-1:000000000000:orders"), [], here, "us-east-1")).toMatchObject({
      reason: expect.stringMatching(/eu-west-1/),
    });
    expect(originFor({}, ["only"], here, "us-east-1")).toEqual({ name: "only" });
    expect(originFor({}, ["a", "b"], here, "us-east-1")).toMatchObject({
      reason: expect.stringMatching(/Pick a target/),
    });
    expect(originFor({}, [], here, "us-east-1")).toMatchObject({ reason: expect.stringMatching(/Pick a target/) });
    expect(parseQueueArn("nope")).toBeNull();
  });

  it("the move's visibility outlasts the longest send", () => {
    expect(moveVisibilitySeconds(30, 22_000, 2)).toBe(59);
    expect(moveVisibilitySeconds(120, 22_000, 2)).toBe(120);
  });
});

/** A scripted SQS: what it was asked, and answers per command. */
function fakeSqs(
  msgs: Message[],
  answers: { deleteFails?: boolean; sendThrows?: boolean; depth?: number; maxPerReceive?: boolean } = {},
) {
  const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
  let delivered = 0;
  const sqs = {
    send: async (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = cmd.constructor.name;
      calls.push({ name, input: cmd.input });
      switch (name) {
        case "ReceiveMessageCommand": {
          // Each letter once; at most MaxNumberOfMessages per call when asked to behave like SQS.
          const n = answers.maxPerReceive ? Number(cmd.input.MaxNumberOfMessages) : msgs.length;
          const out = msgs.slice(delivered, delivered + n);
          delivered += out.length;
          return { Messages: out };
        }
        case "ChangeMessageVisibilityBatchCommand":
          return { Successful: [], Failed: [] };
        case "SendMessageBatchCommand":
        case "SendMessageCommand":
          if (answers.sendThrows)
            throw Object.assign(new Error("boom"), { name: "InternalError", $metadata: { httpStatusCode: 500 } });
          return name === "SendMessageCommand"
            ? { MessageId: "sent-0" }
            : {
                Successful: ((cmd.input.Entries as Array<{ Id: string }>) ?? []).map((e) => ({
                  Id: e.Id,
                  MessageId: `sent-${e.Id}`,
                })),
                Failed: [],
              };
        case "DeleteMessageBatchCommand":
          return answers.deleteFails
            ? {
                Successful: [],
                Failed: (cmd.input.Entries as Array<{ Id: string }>).map((e) => ({
                  Id: e.Id,
                  Code: "ReceiptHandleIsInvalid",
                  SenderFault: true,
                })),
              }
            : { Successful: (cmd.input.Entries as Array<{ Id: string }>).map((e) => ({ Id: e.Id })), Failed: [] };
        default:
          throw new Error(`unexpected ${name}`);
      }
    },
  };
  const summary = {
    queueType: "standard",
    origins: ["src"],
    depth: answers.depth ?? msgs.length,
    inFlight: 0,
  } as DlqSummary;
  const ctx: SqsMoveContext = {
    sqs: sqs as unknown as SQSClient,
    open: async () => ({
      url: "dlq-url",
      attrs: { QueueArn: "arn:aws:sqs:us-east-1:000000000000:dlq" },
      summary,
      room: 1000,
    }),
    urlOf: async (n) => `url:${n}`,
    queueAttrs: async () => ({}),
    err: (e, q) => mapSqsError(e, { endpoint: "fake", queue: q }),
    region: "us-east-1",
    visibilityTimeout: 60,
    receiveConcurrency: 1,
    maxEmptyReceives: 1,
    maxScan: 1000,
    maxBatchBytes: 256 * 1024,
  };
  return { ctx, calls };
}

async function all(it: AsyncIterable<MoveResult>) {
  const out: MoveResult[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe("moveSqsLetters against a scripted SQS", () => {
  const m = (i: number): Message => ({
    MessageId: `id-${i}`,
    ReceiptHandle: `rh-${i}`,
    Body: `body-${i}`,
    Attributes: { SentTimestamp: String(1000 + i) },
    MessageAttributes: {},
  });
  const req = (i: number) => ({
    letterId: `id-${i}`,
    sha256: sha256Hex(`body-${i}`),
    target: { kind: "origin" as const },
    markers: { ...marks, replayId: `replay-${i}` },
  });

  it("heldKeys: letters of a held message group are not sent nor deleted (failed, held back) and are released; others move", async () => {
    const g = (i: number, group: string): Message => ({
      ...m(i),
      Attributes: { ...m(i).Attributes, MessageGroupId: group },
    });
    const { ctx, calls } = fakeSqs([g(0, "g1"), m(1), g(2, "g1")]);
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), req(1), req(2)], { heldKeys: ["g1"] }));
    const by = new Map(r.map((x) => [x.letterId, x]));
    for (const id of ["id-0", "id-2"]) {
      expect(by.get(id)).toMatchObject({ outcome: "failed", orderingKey: "g1" });
      expect(by.get(id)!.reason).toMatch(/^Held back: an earlier letter with the same key failed/);
    }
    expect(by.get("id-1")!.outcome).toBe("moved");
    const sent = calls
      .filter((c) => /^SendMessage/.test(c.name))
      .flatMap((c) =>
        ((c.input.Entries as Array<{ MessageBody: string }>) ?? [c.input as { MessageBody: string }]).map(
          (e) => e.MessageBody,
        ),
      );
    expect(sent).toEqual(["body-1"]);
    const deleted = calls
      .filter((c) => c.name === "DeleteMessageBatchCommand")
      .flatMap((c) => (c.input.Entries as Array<{ ReceiptHandle: string }>).map((e) => e.ReceiptHandle));
    expect(deleted).toEqual(["rh-1"]);
  });

  it("deletes only after the send succeeded, refreshes the hold before sending, releases the rest", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1), m(2)]);
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), req(2)]));
    expect(r.map((x) => x.outcome)).toEqual(["moved", "moved"]);
    const names = calls.map((c) => c.name);
    const send = names.indexOf("SendMessageBatchCommand");
    const del = names.indexOf("DeleteMessageBatchCommand");
    expect(send).toBeGreaterThan(-1);
    expect(del).toBeGreaterThan(send);
    expect(calls[send - 1]).toMatchObject({
      name: "ChangeMessageVisibilityBatchCommand",
      input: {
        Entries: [
          { ReceiptHandle: "rh-0", VisibilityTimeout: 60 },
          { ReceiptHandle: "rh-2", VisibilityTimeout: 60 },
        ],
      },
    });
    const last = calls[calls.length - 1];
    expect(last).toMatchObject({
      name: "ChangeMessageVisibilityBatchCommand",
      input: { Entries: [{ ReceiptHandle: "rh-1", VisibilityTimeout: 0 }] },
    });
  });

  it("a depth that counts too few (letters released a moment ago): every requested letter is still received and moved", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1), m(2)], { depth: 0, maxPerReceive: true });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), req(1), req(2)]));
    expect(r.map((x) => [x.letterId, x.outcome])).toEqual([
      ["id-0", "moved"],
      ["id-1", "moved"],
      ["id-2", "moved"],
    ]);
    expect(calls.find((c) => c.name === "ReceiveMessageCommand")!.input.MaxNumberOfMessages).toBe(3);
  });

  it("an expired receipt handle: the delete fails → 'failed' saying the letter is in both queues, tagged; never released", async () => {
    const { ctx, calls } = fakeSqs([m(0)], { deleteFails: true });
    const [r] = await all(moveSqsLetters(ctx, "dlq", [req(0)]));
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/both queues/);
    expect(r.reason).toContain("replay-0");
    expect(
      calls.filter(
        (c) =>
          c.name === "ChangeMessageVisibilityBatchCommand" && JSON.stringify(c.input).includes('"VisibilityTimeout":0'),
      ),
    ).toHaveLength(0);
  });

  it("a failed send: never deleted, released at once", async () => {
    const { ctx, calls } = fakeSqs([m(0)], { sendThrows: true });
    const [r] = await all(moveSqsLetters(ctx, "dlq", [req(0)]));
    expect(r.outcome).toBe("failed");
    expect(calls.some((c) => c.name === "DeleteMessageBatchCommand")).toBe(false);
    expect(calls[calls.length - 1]).toMatchObject({
      name: "ChangeMessageVisibilityBatchCommand",
      input: { Entries: [{ ReceiptHandle: "rh-0", VisibilityTimeout: 0 }] },
    });
  });
});

describe("repair against a scripted SQS", () => {
  const m = (i: number): Message => ({
    MessageId: `id-${i}`,
    ReceiptHandle: `rh-${i}`,
    Body: `body-${i}`,
    Attributes: { SentTimestamp: String(1000 + i) },
    MessageAttributes: { "x-debug": { DataType: "String", StringValue: "d" } },
  });
  const op = "op-1";
  const fix = (i: number, repair: Record<string, unknown> = { body: new TextEncoder().encode(`fixed-${i}`) }) => ({
    letterId: `id-${i}`,
    sha256: sha256Hex(`body-${i}`),
    target: { kind: "origin" as const },
    markers: { ...marks, replayId: `replay-${i}` },
    repair: { operationId: op, ...repair },
  });
  const sends = (calls: Array<{ name: string; input: Record<string, unknown> }>) =>
    calls.filter((c) => /^SendMessage/.test(c.name));

  it("each repaired letter is sent alone, then archived as it was, then deleted; copyId is SQS's new MessageId", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)]);
    const archived: LetterCopy[] = [];
    const order: string[] = [];
    const r = await all(
      moveSqsLetters(
        ctx,
        "dlq",
        [fix(0, { body: new TextEncoder().encode("fixed-0"), removeHeaders: ["x-debug"] }), fix(1)],
        {
          beforeRemove: async (copy) => {
            order.push(
              `archive ${copy.letterId} after ${calls
                .filter((c) => /^SendMessage|^DeleteMessage/.test(c.name))
                .map((c) => c.name)
                .join(",")}`,
            );
            archived.push(copy);
          },
        },
      ),
    );
    expect(r).toEqual([
      {
        letterId: "id-0",
        outcome: "moved",
        destination: "queue src",
        reason: null,
        orderingKey: null,
        copyId: "sent-0",
      },
      {
        letterId: "id-1",
        outcome: "moved",
        destination: "queue src",
        reason: null,
        orderingKey: null,
        copyId: "sent-0",
      },
    ]);
    expect(sends(calls).map((c) => c.name)).toEqual(["SendMessageCommand", "SendMessageCommand"]);
    expect(order).toEqual([
      "archive id-0 after SendMessageCommand",
      "archive id-1 after SendMessageCommand,DeleteMessageBatchCommand,SendMessageCommand",
    ]);
    const first = sends(calls)[0].input as {
      MessageBody: string;
      MessageAttributes: Record<string, MessageAttributeValue>;
    };
    expect(first.MessageBody).toBe("fixed-0");
    expect(first.MessageAttributes).not.toHaveProperty("x-debug");
    expect(first.MessageAttributes[REPAIR_HEADER].StringValue).toBe(op);
    // The archive holds the original, not the repaired copy.
    expect(Buffer.from(archived[0].letter.body).toString()).toBe("body-0");
    expect(archived[0].letter.headers.map((h) => h.name)).toContain("x-debug");
    expect(JSON.parse(Buffer.from(archived[0].envelope).toString())).toMatchObject({ kind: "sqs", messageId: "id-0" });
  });

  it("an archive that throws: the original is not deleted but released, the reason says the copy was published and hides the error", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)]);
    const r = await all(
      moveSqsLetters(ctx, "dlq", [fix(0), fix(1)], {
        beforeRemove: async (copy) => {
          if (copy.letterId === "id-0") throw new Error("secret db detail");
          throw new AppError("unavailable:db", { userMessage: "The archive is not reachable." });
        },
      }),
    );
    expect(r.map((x) => x.outcome)).toEqual(["failed", "failed"]);
    expect(r[0].reason).toMatch(/repaired copy was published/);
    expect(r[0].reason).not.toContain("secret db detail");
    expect(r[1].reason).toContain("The archive is not reachable");
    expect(calls.some((c) => c.name === "DeleteMessageBatchCommand")).toBe(false);
    const released = calls
      .filter(
        (c) =>
          c.name === "ChangeMessageVisibilityBatchCommand" && JSON.stringify(c.input).includes('"VisibilityTimeout":0'),
      )
      .flatMap((c) => (c.input.Entries as Array<{ ReceiptHandle: string }>).map((e) => e.ReceiptHandle));
    expect(released.sort()).toEqual(["rh-0", "rh-1"]);
  });

  it("no beforeRemove: bad_request before the DLQ is opened or anything received", async () => {
    const { ctx, calls } = fakeSqs([m(0)]);
    let opened = false;
    const e = await all(
      moveSqsLetters(
        {
          ...ctx,
          open: async () => {
            opened = true;
            return ctx.open();
          },
        },
        "dlq",
        [fix(0)],
      ),
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).kind).toBe("bad_request");
    expect(opened).toBe(false);
    expect(calls).toHaveLength(0);
  });

  it("a request SQS cannot carry fails with nothing sent nor archived; in a FIFO group it holds back the later letters", async () => {
    const g = (i: number): Message => ({
      ...m(i),
      Attributes: { ...m(i).Attributes, MessageGroupId: "g1", SequenceNumber: String(10 + i) },
    });
    const { ctx, calls } = fakeSqs([g(0), g(1), m(2)]);
    let archived = 0;
    const r = await all(
      moveSqsLetters(
        ctx,
        "dlq",
        [
          fix(0, { body: Uint8Array.from([0xff]) }),
          fix(1),
          fix(2, { setHeaders: { [REDRIVE_HEADERS.redriveCount]: "0" } }),
        ],
        {
          beforeRemove: async () => {
            archived++;
          },
        },
      ),
    );
    const by = new Map(r.map((x) => [x.letterId, x]));
    expect(by.get("id-0")).toMatchObject({
      outcome: "failed",
      orderingKey: "g1",
      reason: expect.stringMatching(/UTF-8/),
    });
    expect(by.get("id-1")).toMatchObject({
      outcome: "failed",
      orderingKey: "g1",
      reason: expect.stringMatching(/message group "g1"/),
    });
    expect(by.get("id-2")).toMatchObject({ outcome: "failed", reason: expect.stringMatching(/managed/) });
    expect(archived).toBe(0);
    expect(sends(calls)).toHaveLength(0);
    expect(calls.some((c) => c.name === "DeleteMessageBatchCommand")).toBe(false);
  });

  it("a letter whose repair does not fit (system attribute, too large) stays: nothing sent, released", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)]);
    const r = await all(
      moveSqsLetters(
        { ...ctx, maxBatchBytes: 100 },
        "dlq",
        [
          fix(0, { setHeaders: { AWSTraceHeader: "Root=2" } }),
          fix(1, { body: new TextEncoder().encode("x".repeat(200)) }),
        ],
        { beforeRemove: async () => undefined },
      ),
    );
    expect(r.map((x) => x.outcome)).toEqual(["failed", "failed"]);
    expect(r[0].reason).toMatch(/system attribute/);
    expect(r[1].reason).toMatch(/more than the 100 bytes/);
    expect(sends(calls)).toHaveLength(0);
  });

  it("requests without repair still go in one batch and carry no copyId", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)]);
    const plain = (i: number) => ({ ...fix(i), repair: undefined });
    const r = await all(moveSqsLetters(ctx, "dlq", [plain(0), plain(1)]));
    expect(r.map((x) => x.outcome)).toEqual(["moved", "moved"]);
    expect(r[0]).not.toHaveProperty("copyId");
    expect(sends(calls).map((c) => c.name)).toEqual(["SendMessageBatchCommand"]);
  });
});
