import { describe, expect, it } from "vitest";
import { isManagedHeader } from "@/lib/connections/managed-headers";
import type { Message, MessageAttributeValue, SQSClient } from "@aws-sdk/client-sqs";
import { AppError } from "@/lib/errors";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS, REPAIR_HEADER, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveResult } from "@/lib/brokers/contract/move";
import { sha256Hex } from "@/lib/brokers/display";
import { mapSqsError } from "@/lib/brokers/sqs/errors";
import { toLetter } from "@/lib/brokers/sqs/letter";
import { COMBINED_MARKER, expandCombinedMarker, readMarkers, withMarkers } from "@/lib/brokers/sqs/markers";
import { moveWords } from "@/lib/brokers/move-rules";
import { moveVisibilitySeconds } from "@/lib/brokers/sqs/holds";
import { moveSqsLetters } from "@/lib/brokers/sqs/mover";
import { removeSqsLetters } from "@/lib/brokers/sqs/remove";
import { dedupIdFor, entrySize, originFor, parseQueueArn, sendEntryFor } from "@/lib/brokers/sqs/send-entry";
import type { SqsMoveContext } from "@/lib/brokers/sqs/step";

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
  answers: {
    deleteFails?: boolean;
    sendThrows?: boolean;
    depth?: number;
    maxPerReceive?: boolean;
    /** Letters in flight at another reader (counted in ApproximateNumberOfMessagesNotVisible). */
    othersHold?: number;
    /** ApproximateNumberOfMessages when asked (default: the letters not held nor deleted). */
    visible?: number;
    /** Letters the first receive hands out (a group's later letters not yet visible again). */
    firstReceive?: number;
    room?: number;
    fifo?: boolean;
  } = {},
) {
  const calls: Array<{ name: string; input: Record<string, unknown> }> = [];
  // Receipt handles handed out and neither deleted nor released (held), and those deleted.
  const inFlight = new Set<string>();
  const deleted = new Set<string>();
  let receives = 0;
  const groupOf = (m: Message) => m.Attributes?.MessageGroupId;
  const entries = (cmd: { input: Record<string, unknown> }) =>
    (cmd.input.Entries as Array<{ Id: string; ReceiptHandle: string; VisibilityTimeout?: number }>) ?? [];
  const sqs = {
    send: async (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
      const name = cmd.constructor.name;
      calls.push({ name, input: cmd.input });
      switch (name) {
        case "ReceiveMessageCommand": {
          // What is visible, in order; at most MaxNumberOfMessages per call when asked to behave like
          // SQS. FIFO: nothing of a group with a letter in flight.
          receives++;
          let n = answers.maxPerReceive ? Number(cmd.input.MaxNumberOfMessages) : msgs.length;
          if (receives === 1 && answers.firstReceive !== undefined) n = answers.firstReceive;
          const busy = new Set(msgs.filter((m) => inFlight.has(m.ReceiptHandle!)).map(groupOf));
          const out = msgs
            .filter((m) => !inFlight.has(m.ReceiptHandle!) && !deleted.has(m.ReceiptHandle!))
            .filter((m) => !answers.fifo || !busy.has(groupOf(m)))
            .slice(0, n);
          for (const m of out) inFlight.add(m.ReceiptHandle!);
          return { Messages: out };
        }
        case "ChangeMessageVisibilityBatchCommand":
          for (const e of entries(cmd)) if (e.VisibilityTimeout === 0) inFlight.delete(e.ReceiptHandle);
          return { Successful: [], Failed: [] };
        case "GetQueueAttributesCommand":
          return {
            Attributes: {
              ApproximateNumberOfMessages: String(
                answers.visible ??
                  msgs.filter((m) => !inFlight.has(m.ReceiptHandle!) && !deleted.has(m.ReceiptHandle!)).length,
              ),
              ApproximateNumberOfMessagesNotVisible: String(inFlight.size + (answers.othersHold ?? 0)),
            },
          };
        case "SendMessageBatchCommand":
        case "SendMessageCommand":
          if (answers.sendThrows)
            throw Object.assign(new Error("boom"), { name: "InternalError", $metadata: { httpStatusCode: 500 } });
          return name === "SendMessageCommand"
            ? { MessageId: "sent-0" }
            : {
                Successful: entries(cmd).map((e) => ({ Id: e.Id, MessageId: `sent-${e.Id}` })),
                Failed: [],
              };
        case "DeleteMessageBatchCommand":
          if (answers.deleteFails)
            return {
              Successful: [],
              Failed: entries(cmd).map((e) => ({ Id: e.Id, Code: "ReceiptHandleIsInvalid", SenderFault: true })),
            };
          for (const e of entries(cmd)) {
            inFlight.delete(e.ReceiptHandle);
            deleted.add(e.ReceiptHandle);
          }
          return { Successful: entries(cmd).map((e) => ({ Id: e.Id })), Failed: [] };
        default:
          throw new Error(`unexpected ${name}`);
      }
    },
  };
  const summary = {
    queueType: answers.fifo ? "fifo" : "standard",
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
      room: answers.room ?? 1000,
    }),
    urlOf: async (n) => `url:${n}`,
    queueAttrs: async () => (answers.fifo ? { FifoQueue: "true" } : {}),
    err: (e, q) => mapSqsError(e, { endpoint: "fake", queue: q }),
    region: "us-east-1",
    visibilityTimeout: 60,
    receiveConcurrency: 1,
    maxEmptyReceives: 1,
    maxScan: 1000,
    maxBatchBytes: 256 * 1024,
    isManagedHeader,
  };
  return { ctx, calls, inFlight };
}

async function all<T = MoveResult>(it: AsyncIterable<T>) {
  const out: T[] = [];
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
    expect(r.target).toBeNull();
  });

  it("beforeRemove on a plain move: each original handed over after the batch was sent and before its delete; a throw keeps it, released", async () => {
    const { ctx, calls, inFlight } = fakeSqs([m(0), m(1)]);
    const order: string[] = [];
    const r = await all(
      moveSqsLetters(ctx, "dlq", [req(0), req(1)], {
        beforeRemove: async (copy) => {
          order.push(`${copy.letterId} after ${calls.map((c) => c.name.replace("Command", "")).join(",")}`);
          if (copy.letterId === "id-1") throw new Error("secret");
        },
      }),
    );
    expect(order).toEqual([
      "id-0 after ReceiveMessage,ChangeMessageVisibilityBatch,SendMessageBatch",
      "id-1 after ReceiveMessage,ChangeMessageVisibilityBatch,SendMessageBatch",
    ]);
    expect(r[0]).toEqual({
      letterId: "id-0",
      outcome: "moved",
      destination: "queue src",
      target: "src",
      reason: null,
      orderingKey: null,
    });
    expect(r[1]).toMatchObject({
      outcome: "failed",
      target: "src",
      reason: moveWords("move").copyNotArchived(new Error("secret"), 'queue "src"', null),
    });
    const deleted = calls
      .filter((c) => c.name === "DeleteMessageBatchCommand")
      .flatMap((c) => (c.input.Entries as Array<{ ReceiptHandle: string }>).map((e) => e.ReceiptHandle));
    expect(deleted).toEqual(["rh-0"]);
    expect(inFlight.size).toBe(0);
  });

  it("MoveResult.target names the queue the copy went to", async () => {
    const { ctx } = fakeSqs([m(0)]);
    const [r] = await all(moveSqsLetters(ctx, "dlq", [req(0)]));
    expect(r).toMatchObject({ outcome: "moved", destination: "queue src", target: "src" });
  });
});

describe("the shared move rules on SQS", () => {
  const m = (i: number, over: Partial<Message> = {}): Message => ({
    MessageId: `id-${i}`,
    ReceiptHandle: `rh-${i}`,
    Body: `body-${i}`,
    Attributes: { SentTimestamp: String(1000 + i) },
    MessageAttributes: {},
    ...over,
  });
  const req = (i: number) => ({
    letterId: `id-${i}`,
    sha256: sha256Hex(`body-${i}`),
    target: { kind: "origin" as const },
    markers: { ...marks, replayId: `replay-${i}` },
  });
  const words = moveWords("move", "DLQ");
  const sentBodies = (calls: Array<{ name: string; input: Record<string, unknown> }>) =>
    calls
      .filter((c) => /^SendMessage/.test(c.name))
      .flatMap((c) =>
        ((c.input.Entries as Array<{ MessageBody: string }>) ?? [c.input as { MessageBody: string }]).map(
          (e) => e.MessageBody,
        ),
      );

  it("a letter id asked for twice is one request: moved once, one result", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)]);
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), { ...req(0), sha256: "f".repeat(64) }, req(1)]));
    expect(r.map((x) => [x.letterId, x.outcome])).toEqual([
      ["id-0", "moved"],
      ["id-1", "moved"],
    ]);
    expect(sentBodies(calls)).toEqual(["body-0", "body-1"]);
  });

  it("a discard asked twice for one letter archives it once, with one result", async () => {
    const { ctx } = fakeSqs([m(0)]);
    const archived: string[] = [];
    const r = await all(
      removeSqsLetters(ctx, "dlq", [req(0), req(0)], {
        operationId: "op-1",
        beforeRemove: async (copy) => {
          archived.push(copy.letterId);
        },
      }),
    );
    expect(r).toEqual([{ letterId: "id-0", outcome: "removed", reason: null }]);
    expect(archived).toEqual(["id-0"]);
  });

  it("a checksum recorded in upper case (or with spaces) matches: the letter moves", async () => {
    const { ctx } = fakeSqs([m(0)]);
    const [r] = await all(moveSqsLetters(ctx, "dlq", [{ ...req(0), sha256: ` ${req(0).sha256.toUpperCase()} ` }]));
    expect(r).toMatchObject({ outcome: "moved", target: "src" });
  });

  it("a checksum that differs: checksum_mismatch in the shared words, not sent, released", async () => {
    const { ctx, calls, inFlight } = fakeSqs([m(0)]);
    const [r] = await all(moveSqsLetters(ctx, "dlq", [{ ...req(0), sha256: "A".repeat(64) }]));
    expect(r).toMatchObject({ outcome: "checksum_mismatch", reason: words.mismatch, target: null });
    expect(sentBodies(calls)).toEqual([]);
    expect(inFlight.size).toBe(0);
  });

  it("not found after the whole DLQ was looked at, and no other reader holds letters: missing", async () => {
    const { ctx } = fakeSqs([m(0), m(1)]);
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), req(9)]));
    expect(r).toEqual([
      expect.objectContaining({ letterId: "id-0", outcome: "moved" }),
      {
        letterId: "id-9",
        outcome: "missing",
        destination: null,
        target: null,
        reason: words.missing("dlq"),
        orderingKey: null,
      },
    ]);
  });

  it("not found while another reader holds letters of the DLQ: failed, still in the DLQ hidden by that reader, never missing", async () => {
    const { ctx, calls } = fakeSqs([m(0), m(1)], { othersHold: 2 });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(0), req(9)]));
    expect(r.find((x) => x.letterId === "id-0")!.outcome).toBe("moved");
    const hidden = r.find((x) => x.letterId === "id-9")!;
    expect(hidden).toMatchObject({
      outcome: "failed",
      target: null,
      reason: words.hiddenByAnotherReader(2),
      retryLater: true,
    });
    expect(hidden.reason).toMatch(/^Still in the DLQ, hidden by another reader/);
    // Asked while the look still held what it received (id-1 and id-0 are this call's, not another reader's).
    const asked = calls.findIndex((c) => c.name === "GetQueueAttributesCommand");
    expect(asked).toBeGreaterThan(calls.findIndex((c) => c.name === "ReceiveMessageCommand"));
    expect(asked).toBeLessThan(calls.findIndex((c) => /^SendMessage/.test(c.name)));
  });

  it("not found in a look that stopped at its limit with letters unread: failed (not reached), never missing", async () => {
    const { ctx } = fakeSqs([m(0), m(1), m(2)], { room: 1, maxPerReceive: true });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(2)]));
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ letterId: "id-2", outcome: "failed" });
    expect(r[0].reason).toMatch(
      /^Not moved: the console could not look through the whole DLQ \(it stopped after 2 letters/,
    );
  });

  it("FIFO: not found while letters wait behind held groups: failed (not reached), never missing", async () => {
    const g = (i: number) => m(i, { Attributes: { SequenceNumber: String(10 + i), MessageGroupId: "g" } });
    const { ctx, calls } = fakeSqs([g(0)], { fifo: true, visible: 1 });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(1)]));
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ letterId: "id-1", outcome: "failed" });
    expect(r[0].reason).toMatch(/waited behind earlier letters of their message groups/);
    // Looked once more (the group head released first), then said so.
    expect(calls.filter((c) => c.name === "GetQueueAttributesCommand")).toHaveLength(2);
  });

  it("FIFO: a letter behind a group head that a first receive alone took is found by the fresh look, and moves", async () => {
    const g = (i: number) => m(i, { Attributes: { SequenceNumber: String(10 + i), MessageGroupId: "g" } });
    const { ctx, inFlight } = fakeSqs([g(0), g(1)], { fifo: true, firstReceive: 1 });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(1)]));
    expect(r).toEqual([expect.objectContaining({ letterId: "id-1", outcome: "moved", target: "src" })]);
    expect(inFlight.size).toBe(0);
  });

  it("FIFO: receives ask for 10, so a group comes whole even when the depth counts too few", async () => {
    const g = (i: number) => m(i, { Attributes: { SequenceNumber: String(10 + i), MessageGroupId: "g" } });
    const { ctx, calls } = fakeSqs([g(0), g(1), g(2)], { fifo: true, depth: 2, maxPerReceive: true });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(2)]));
    expect(r).toEqual([expect.objectContaining({ letterId: "id-2", outcome: "moved" })]);
    expect(calls.find((c) => c.name === "ReceiveMessageCommand")!.input.MaxNumberOfMessages).toBe(10);
  });

  it("FIFO: a letter gone from its group is missing once the fresh look saw the whole group", async () => {
    const g = (i: number) => m(i, { Attributes: { SequenceNumber: String(10 + i), MessageGroupId: "g" } });
    const { ctx } = fakeSqs([g(0), g(2)], { fifo: true, firstReceive: 1 });
    const r = await all(moveSqsLetters(ctx, "dlq", [req(1)]));
    expect(r).toEqual([
      expect.objectContaining({ letterId: "id-1", outcome: "missing", reason: words.missing("dlq") }),
    ]);
  });

  it("an id no SQS letter can have: missing at once, in the shared words", async () => {
    const { ctx, calls } = fakeSqs([m(0)]);
    const [r] = await all(moveSqsLetters(ctx, "dlq", [{ ...req(0), letterId: "not an id!" }]));
    expect(r).toMatchObject({ outcome: "missing", reason: words.unknownId("an SQS MessageId") });
    expect(calls.some((c) => c.name === "ReceiveMessageCommand")).toBe(false);
  });

  it("FIFO: a letter that stays holds back the later letters of its group, naming it; other groups move", async () => {
    const g = (i: number, group: string) =>
      m(i, { Attributes: { SequenceNumber: String(10 + i), MessageGroupId: group } });
    const { ctx, calls } = fakeSqs([g(0, "a"), g(1, "b"), g(2, "a")], { fifo: true });
    const r = await all(moveSqsLetters(ctx, "dlq", [{ ...req(0), sha256: "0".repeat(64) }, req(1), req(2)]));
    expect(r.map((x) => [x.letterId, x.outcome, x.reason])).toEqual([
      ["id-0", "checksum_mismatch", words.mismatch],
      ["id-1", "moved", null],
      ["id-2", "failed", words.laneBlocked("id-0")],
    ]);
    expect(sentBodies(calls)).toEqual(["body-1"]);
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
        target: "src",
        reason: null,
        orderingKey: null,
        copyId: "sent-0",
      },
      {
        letterId: "id-1",
        outcome: "moved",
        destination: "queue src",
        target: "src",
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
    // The copy went out: its target is named, in the words every broker uses.
    expect(r.map((x) => x.target)).toEqual(["src", "src"]);
    expect(r[0].reason).toBe(moveWords("move").copyNotArchived(new Error("secret db detail"), 'queue "src"', "sent-0"));
    expect(r[0].reason).toMatch(/repaired copy \(sent-0\) was published to queue "src"/);
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
      reason: moveWords("move").laneBlocked("id-0"),
    });
    expect(by.get("id-2")).toMatchObject({
      outcome: "failed",
      reason: expect.stringMatching(/is kept by the broker or the console/),
    });
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
