// moveLetters on real SQS servers: the shared redrive contract on ElasticMQ (standard and FIFO) and
// moto (no DeadLetterQueueSourceArn: origin from the only source queue), then what is SQS's own:
// typed attributes and AWSTraceHeader kept, the 10-attribute limit (combined marker), FIFO
// deduplication and group order, targets, release on abort, chained DLQs.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type MessageAttributeValue,
} from "@aws-sdk/client-sqs";
import { collectMoves, headerOf, markersFor, runRedriveContract } from "@/lib/brokers/contract-suite/redrive";
import { runRemoveContract } from "@/lib/brokers/contract-suite/remove";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS, type RedriveMarkers } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { MoveRequest, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";
import { moveWords } from "@/lib/brokers/move-rules";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { SQS_CONTRACT_SERVERS, peekAll, sqsContractFixture } from "@/lib/brokers/sqs/contract-fixture";
import { COMBINED_MARKER } from "@/lib/brokers/sqs/markers";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const bodyText = (b: Uint8Array | string | undefined) =>
  typeof b === "string" ? b : Buffer.from(b ?? new Uint8Array()).toString("utf8");

// ---------- the shared contract ----------

for (const { label, endpoint, over, fifo } of SQS_CONTRACT_SERVERS) {
  const contractFixture = sqsContractFixture(endpoint, over, fifo, { allManagedHeaders: MANAGED_HEADERS });
  runRedriveContract(label, contractFixture);
  runRemoveContract(label, contractFixture);
}

// ---------- SQS's own ----------

/** Polls until `done` holds, at most 2 s. */
async function until(done: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 2000;
  while (!(await done()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** Depth once the server has applied a release (ElasticMQ counts a letter made visible "now" a moment later); at most 2 s. */
async function depthSoon(kit: SqsKit, url: string, expected: number): Promise<number> {
  const end = Date.now() + 2000;
  for (;;) {
    const d = await kit.depth(url);
    if (d === expected || Date.now() > end) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const req = (l: Letter, target: RedriveTarget, markers: RedriveMarkers): MoveRequest => ({
  letterId: l.id,
  sha256: l.sha256,
  target,
  markers,
});
const attrsN = (n: number, prefix = "a"): Record<string, MessageAttributeValue> =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`${prefix}${i}`, { DataType: "String", StringValue: `v${i}` }]),
  );

describe("SQS moveLetters on ElasticMQ", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  const adapter = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });
  const browseAll = async (dlq: string, acceptRisk = false) =>
    (await adapter.browse(dlq, { offset: 0, limit: 100, acceptRisk })).letters;
  const notVisible = async (url: string) =>
    Number(
      (
        await kit.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["ApproximateNumberOfMessagesNotVisible"] }),
        )
      ).Attributes!.ApproximateNumberOfMessagesNotVisible,
    );
  /** In flight once the server has applied a release (at most 2 s: "at once", against a 60 s hold). */
  const inFlight = async (url: string) => {
    const end = Date.now() + 2000;
    for (;;) {
      const n = await notVisible(url);
      if (n === 0 || Date.now() > end) return n;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it("moves 2 of 5 to the source queue byte-exact, typed attributes and markers added; 3 remain visible; absent ids are missing", async () => {
    const bodies = ["plain", `{"json": [1, 2.50, "x"]}`, "Ünïcödé 💥 \r\n\t end", " leading and trailing  ", "last"];
    const attributes: Record<string, MessageAttributeValue> = {
      amount: { DataType: "Number", StringValue: "12345678901234567890.10" },
      blob: { DataType: "Binary.proto", BinaryValue: Uint8Array.from([0, 255, 128]) },
      tenant: { DataType: "String.tenant", StringValue: "acme" },
    };
    const { dlq, dlqUrl, sourceUrl, source } = await kit.dlqByRedrive(
      bodies.map((b) => ({ body: text(b), attributes })),
      { maxReceiveCount: 3 },
    );
    const before = await browseAll(dlq);
    const chosen = [
      before.find((l) => bodyText(l.body) === bodies[1])!,
      before.find((l) => bodyText(l.body) === bodies[2])!,
    ];
    const job = randomUUID();
    const marks = chosen.map((l) => markersFor(job, 1, l.messageId));
    const results = await collectMoves(
      adapter.moveLetters(dlq, [
        ...chosen.map((l, i) => req(l, { kind: "origin" }, marks[i])),
        {
          letterId: "00000000-0000-0000-0000-000000000000",
          sha256: "0".repeat(64),
          target: { kind: "origin" },
          markers: markersFor(job),
        },
        { letterId: "not an id!", sha256: "0".repeat(64), target: { kind: "origin" }, markers: markersFor(job) },
      ]),
    );
    expect(
      results
        .filter((r) => r.outcome === "moved")
        .map((r) => r.letterId)
        .sort(),
    ).toEqual(chosen.map((l) => l.id).sort());
    for (const r of results.filter((r) => r.outcome === "moved"))
      expect(r).toMatchObject({ destination: `queue ${source}`, reason: null });
    expect(
      results
        .filter((r) => r.outcome === "missing")
        .map((r) => r.letterId)
        .sort(),
    ).toEqual(["00000000-0000-0000-0000-000000000000", "not an id!"]);
    // The rest is visible again at once, nothing left in flight.
    expect(await inFlight(dlqUrl)).toBe(0);
    expect(await depthSoon(kit, dlqUrl, 3)).toBe(3);
    const at = await peekAll(kit, sourceUrl);
    expect(at).toHaveLength(2);
    for (const [i, l] of chosen.entries()) {
      const m = at.find((x) => x.MessageAttributes?.[REDRIVE_HEADERS.replayId]?.StringValue === marks[i].replayId)!;
      expect(Buffer.from(m.Body!, "utf8").equals(Buffer.from(l.body))).toBe(true);
      expect(m.MessageAttributes!.amount).toMatchObject({ DataType: "Number", StringValue: "12345678901234567890.10" });
      expect(m.MessageAttributes!.tenant).toMatchObject({ DataType: "String.tenant", StringValue: "acme" });
      expect(Buffer.from(m.MessageAttributes!.blob.BinaryValue!)).toEqual(Buffer.from([0, 255, 128]));
      expect(m.MessageAttributes![REDRIVE_HEADERS.redriveCount]).toMatchObject({
        DataType: "Number",
        StringValue: "1",
      });
      expect(m.MessageAttributes![REDRIVE_HEADERS.redriveId].StringValue).toBe(job);
      expect(m.MessageAttributes![REDRIVE_HEADERS.originalMessageId].StringValue).toBe(l.messageId);
      expect(m.MessageAttributes![COMBINED_MARKER]).toBeUndefined();
    }
    expect((await browseAll(dlq)).map((l) => l.id).sort()).toEqual(
      before
        .filter((l) => !chosen.includes(l))
        .map((l) => l.id)
        .sort(),
    );
  });

  it("a letter id asked for twice, its checksum in upper case: one request, moved once, one result naming the target", async () => {
    const { dlq, dlqUrl, source, sourceUrl } = await kit.dlqByRedrive([
      { body: text("twice-0") },
      { body: text("twice-1") },
    ]);
    const [l] = (await browseAll(dlq)).filter((x) => bodyText(x.body) === "twice-0");
    const job = randomUUID();
    const results = await collectMoves(
      adapter.moveLetters(dlq, [
        { ...req(l, { kind: "origin" }, markersFor(job)), sha256: l.sha256.toUpperCase() },
        req(l, { kind: "origin" }, markersFor(job)),
      ]),
    );
    expect(results).toEqual([
      {
        letterId: l.id,
        outcome: "moved",
        destination: `queue ${source}`,
        target: source,
        reason: null,
        orderingKey: null,
      },
    ]);
    expect((await peekAll(kit, sourceUrl)).map((m) => m.Body)).toEqual(["twice-0"]);
    expect(await inFlight(dlqUrl)).toBe(0);
    expect(await depthSoon(kit, dlqUrl, 1)).toBe(1);
  });

  it("not found while another reader holds letters: 'failed', still in the DLQ, never missing; once released, only what left is missing", async () => {
    const { dlq, dlqUrl, source, sourceUrl } = await kit.dlqByRedrive(
      ["kept", "held", "gone"].map((b) => ({ body: text(`other-${b}`) })),
    );
    const before = await browseAll(dlq);
    const by = (b: string) => before.find((l) => bodyText(l.body) === `other-${b}`)!;
    // Another reader: receives all three, deletes "gone", lets "kept" go and keeps "held" hidden.
    const got: Message[] = [];
    while (got.length < 3) {
      const out = await kit.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 120,
          WaitTimeSeconds: 1,
        }),
      );
      got.push(...(out.Messages ?? []));
    }
    const handle = (b: string) => got.find((m) => m.Body === `other-${b}`)!.ReceiptHandle!;
    await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: handle("gone") }));
    await kit.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: dlqUrl, ReceiptHandle: handle("kept"), VisibilityTimeout: 0 }),
    );
    await until(async () => (await kit.depth(dlqUrl)) === 1);

    const words = moveWords("move");
    const job = randomUUID();
    const first = await collectMoves(
      adapter.moveLetters(
        dlq,
        ["kept", "held", "gone"].map((b) => req(by(b), { kind: "origin" }, markersFor(job))),
      ),
    );
    const res = (rs: MoveResult[], b: string) => rs.find((r) => r.letterId === by(b).id)!;
    expect(first).toHaveLength(3);
    expect(res(first, "kept")).toMatchObject({ outcome: "moved", target: source });
    for (const b of ["held", "gone"])
      expect(res(first, b), b).toMatchObject({
        outcome: "failed",
        target: null,
        reason: words.hiddenByAnotherReader(1),
      });

    // The other reader lets go: the look now sees the whole DLQ, and only the deleted letter is missing.
    await kit.sqs.send(
      new ChangeMessageVisibilityCommand({ QueueUrl: dlqUrl, ReceiptHandle: handle("held"), VisibilityTimeout: 0 }),
    );
    expect(await inFlight(dlqUrl)).toBe(0);
    const second = await collectMoves(
      adapter.moveLetters(
        dlq,
        ["held", "gone"].map((b) => req(by(b), { kind: "origin" }, markersFor(job))),
      ),
    );
    expect(res(second, "held")).toMatchObject({ outcome: "moved", target: source });
    expect(res(second, "gone")).toMatchObject({ outcome: "missing", target: null, reason: words.missing(dlq) });
    expect((await peekAll(kit, sourceUrl)).map((m) => m.Body).sort()).toEqual(["other-held", "other-kept"]);
    expect(await depthSoon(kit, dlqUrl, 0)).toBe(0);
  });

  it("keeps AWSTraceHeader where the server keeps it (SentTimestamp is always new: SQS sets it)", async () => {
    const { dlq, dlqUrl, source, sourceUrl } = await kit.dlqByRedrive([]);
    const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1";
    // Sent straight to the DLQ so that the system attribute is set by the test.
    await kit.sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: "traced",
        MessageSystemAttributes: { AWSTraceHeader: { DataType: "String", StringValue: trace } },
      }),
    );
    const [l] = await browseAll(dlq);
    const kept = l.properties.some((p) => p.name === "AWSTraceHeader");
    const [r] = await collectMoves(
      adapter.moveLetters(dlq, [req(l, { kind: "queue", name: source }, markersFor(randomUUID()))]),
    );
    expect(r.outcome).toBe("moved");
    const [m] = await peekAll(kit, sourceUrl);
    if (kept) expect(m.Attributes?.AWSTraceHeader).toBe(trace);
    expect(m.Body).toBe("traced");
  });

  it("checksum mismatch: not moved, released at once", async () => {
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive([{ body: text("sum-0") }, { body: text("sum-1") }]);
    const before = await browseAll(dlq);
    const [r] = await collectMoves(
      adapter.moveLetters(dlq, [
        { ...req(before[0], { kind: "origin" }, markersFor(randomUUID())), sha256: "a".repeat(64) },
      ]),
    );
    expect(r).toMatchObject({ outcome: "checksum_mismatch", letterId: before[0].id });
    expect(r.reason).toMatch(/checksum/);
    expect(await inFlight(dlqUrl)).toBe(0);
    expect(await depthSoon(kit, dlqUrl, 2)).toBe(2);
    expect(await depthSoon(kit, sourceUrl, 0)).toBe(0);
  });

  it("explicit target; a missing target is not_found before anything is received", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive([{ body: text("t-0") }, { body: text("t-1") }]);
    const before = await browseAll(dlq);
    const target = await kit.queue(kit.name("elsewhere"));
    const [r] = await collectMoves(
      adapter.moveLetters(dlq, [req(before[0], { kind: "queue", name: target.name }, markersFor(randomUUID()))]),
    );
    expect(r).toMatchObject({ outcome: "moved", destination: `queue ${target.name}` });
    expect(await depthSoon(kit, target.url, 1)).toBe(1);
    const e = await collectMoves(
      adapter.moveLetters(dlq, [
        req(before[1], { kind: "queue", name: `${kit.prefix}-nope` }, markersFor(randomUUID())),
      ]),
    ).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).kind).toBe("not_found");
    expect((e as BrokerError).userMessage).toContain(`${kit.prefix}-nope`);
    expect(await inFlight(dlqUrl)).toBe(0);
    expect(await depthSoon(kit, dlqUrl, 1)).toBe(1);
  });

  it("crowded attributes: 6 own → four markers (10); 9 own → one combined x-dlq-redrive read back as the four; 10 own → not moved", async () => {
    const { dlq, dlqUrl, source, sourceUrl } = await kit.dlqByRedrive(
      [
        { body: text("six"), attributes: attrsN(6) },
        { body: text("nine"), attributes: attrsN(9) },
        { body: text("ten"), attributes: attrsN(10) },
      ],
      { maxReceiveCount: 3 },
    );
    const before = await browseAll(dlq);
    const by = (b: string) => before.find((l) => bodyText(l.body) === b)!;
    const job = randomUUID();
    const marks = ["six", "nine", "ten"].map((b) => markersFor(job, 1, by(b).messageId));
    const results = await collectMoves(
      adapter.moveLetters(
        dlq,
        ["six", "nine", "ten"].map((b, i) => req(by(b), { kind: "origin" }, marks[i])),
      ),
    );
    const res = (b: string) => results.find((r) => r.letterId === by(b).id)!;
    expect(res("six").outcome).toBe("moved");
    expect(res("nine").outcome).toBe("moved");
    expect(res("ten")).toMatchObject({ outcome: "failed" });
    expect(res("ten").reason).toMatch(/10 message attributes/);
    expect(await depthSoon(kit, dlqUrl, 1)).toBe(1);
    expect(await inFlight(dlqUrl)).toBe(0);

    const at = await peekAll(kit, sourceUrl);
    const six = at.find((m) => m.Body === "six")!;
    expect(Object.keys(six.MessageAttributes!)).toHaveLength(10);
    expect(six.MessageAttributes![REDRIVE_HEADERS.redriveCount].StringValue).toBe("1");
    const nine = at.find((m) => m.Body === "nine")!;
    expect(Object.keys(nine.MessageAttributes!)).toHaveLength(10);
    expect(nine.MessageAttributes![REDRIVE_HEADERS.redriveCount]).toBeUndefined();
    expect(JSON.parse(nine.MessageAttributes![COMBINED_MARKER].StringValue!)).toEqual({
      redriveId: job,
      replayId: marks[1].replayId,
      redriveCount: 1,
      originalMessageId: by("nine").messageId,
    });

    // Die again; the letter with 10 attributes (9 + combined) reads with its redrive count, and moves again within the limit.
    await kit.failUntilMoved(sourceUrl, dlqUrl, 3);
    const back = await browseAll(dlq);
    const nineBack = back.find((l) => bodyText(l.body) === "nine")!;
    expect(
      nineBack.headers.filter(
        (h) =>
          !h.name.startsWith("x-dlq-redrive-") &&
          !h.name.startsWith("x-dlq-replay") &&
          !h.name.startsWith("x-dlq-original"),
      ),
    ).toHaveLength(10);
    expect(headerOf(nineBack, REDRIVE_HEADERS.redriveCount)).toBe("1");
    expect(headerOf(nineBack, REDRIVE_HEADERS.replayId)).toBe(marks[1].replayId);
    expect(headerOf(nineBack, REDRIVE_HEADERS.originalMessageId)).toBe(by("nine").messageId);
    expect(nineBack.messageId).not.toBe(by("nine").messageId);
    const job2 = randomUUID();
    const m2 = markersFor(job2, Number(headerOf(nineBack, REDRIVE_HEADERS.redriveCount)) + 1, nineBack.messageId);
    const [r2] = await collectMoves(adapter.moveLetters(dlq, [req(nineBack, { kind: "origin" }, m2)]));
    expect(r2).toMatchObject({ outcome: "moved", destination: `queue ${source}` });
    const again = (await peekAll(kit, sourceUrl)).find((m) => m.Body === "nine")!;
    expect(Object.keys(again.MessageAttributes!)).toHaveLength(10);
    expect(JSON.parse(again.MessageAttributes![COMBINED_MARKER].StringValue!)).toEqual({
      redriveId: job2,
      replayId: m2.replayId,
      redriveCount: 2,
      originalMessageId: by("nine").messageId,
    });
  });

  it("two cycles: redrive count 2, original message id unchanged (separate markers)", async () => {
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive([{ body: text("cycle"), headers: { app: "x" } }], {
      maxReceiveCount: 3,
    });
    const [first] = await browseAll(dlq);
    await collectMoves(
      adapter.moveLetters(dlq, [req(first, { kind: "origin" }, markersFor(randomUUID(), 1, first.messageId))]),
    );
    await kit.failUntilMoved(sourceUrl, dlqUrl, 1);
    const [second] = await browseAll(dlq);
    expect(headerOf(second, REDRIVE_HEADERS.redriveCount)).toBe("1");
    const m2 = markersFor(randomUUID(), 2, second.messageId);
    expect((await collectMoves(adapter.moveLetters(dlq, [req(second, { kind: "origin" }, m2)])))[0].outcome).toBe(
      "moved",
    );
    await kit.failUntilMoved(sourceUrl, dlqUrl, 1);
    const [third] = await browseAll(dlq);
    expect(headerOf(third, REDRIVE_HEADERS.redriveCount)).toBe("2");
    expect(headerOf(third, REDRIVE_HEADERS.originalMessageId)).toBe(first.messageId);
    expect(third.headers.filter((h) => h.name.startsWith("x-dlq-"))).toHaveLength(4);
  });

  it("FIFO: group order kept, new deduplication id (not swallowed as the original), type mismatches refused with a reason", async () => {
    const groups = ["a", "b", "a", "a", "b"];
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(
      groups.map((g, i) => ({ body: text(`f-${i}`), groupId: g })),
      { fifo: true, maxReceiveCount: 3, sourceAttributes: { ContentBasedDeduplication: "true" } },
    );
    const before = await browseAll(dlq);
    const standard = await kit.queue(kit.name("std"));
    const [mismatch] = await collectMoves(
      adapter.moveLetters(dlq, [req(before[0], { kind: "queue", name: standard.name }, markersFor(randomUUID()))]),
    );
    expect(mismatch).toMatchObject({ outcome: "failed", orderingKey: "a" });
    expect(mismatch.reason).toMatch(/FIFO/);
    expect(await inFlight(dlqUrl)).toBe(0);

    const job = randomUUID();
    const reqs = before.map((l) => req(l, { kind: "origin" }, markersFor(job, 1, l.messageId))).reverse();
    const results = await collectMoves(adapter.moveLetters(dlq, reqs));
    expect(results.map((r) => r.outcome)).toEqual(groups.map(() => "moved"));
    // Results settle in DLQ (SequenceNumber) order.
    expect(results.map((r) => r.letterId)).toEqual(before.map((l) => l.id));
    const at = await peekAll(kit, sourceUrl);
    expect(at.filter((m) => m.Attributes!.MessageGroupId === "a").map((m) => m.Body)).toEqual(["f-0", "f-2", "f-3"]);
    expect(at.filter((m) => m.Attributes!.MessageGroupId === "b").map((m) => m.Body)).toEqual(["f-1", "f-4"]);
    for (const m of at)
      expect(m.Attributes!.MessageDeduplicationId).toBe(m.MessageAttributes![REDRIVE_HEADERS.replayId].StringValue);
    expect(await depthSoon(kit, dlqUrl, 0)).toBe(0);

    const std = await kit.dlqByRedrive([{ body: text("plain") }]);
    const fifoTarget = await kit.queue(kit.name("fifo-target", true), { FifoQueue: "true" });
    const [l] = await browseAll(std.dlq);
    const [r] = await collectMoves(
      adapter.moveLetters(std.dlq, [req(l, { kind: "queue", name: fifoTarget.name }, markersFor(randomUUID()))]),
    );
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/MessageGroupId/);
    expect(await depthSoon(kit, std.dlqUrl, 1)).toBe(1);
  });

  it("abort between batches: what is not moved is visible again at once", async () => {
    const n = 25;
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(
      Array.from({ length: n }, (_, i) => ({ body: text(`ab-${i}`) })),
    );
    const before = await browseAll(dlq);
    expect(before).toHaveLength(n);
    const ac = new AbortController();
    const seen = [];
    for await (const r of adapter.moveLetters(
      dlq,
      before.map((l) => req(l, { kind: "origin" }, markersFor(randomUUID()))),
      { signal: ac.signal },
    )) {
      seen.push(r);
      ac.abort();
    }
    const moved = seen.filter((r) => r.outcome === "moved").length;
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(n);
    expect(await inFlight(dlqUrl)).toBe(0);
    expect(await depthSoon(kit, dlqUrl, n - moved)).toBe(n - moved);
    expect(await depthSoon(kit, sourceUrl, moved)).toBe(moved);
  });

  it("a chained DLQ needs acceptRisk, as reads do", async () => {
    const next = await kit.queue(kit.name("next"));
    const { dlq } = await kit.dlqByRedrive([{ body: text("chained") }], {
      dlqAttributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: next.arn, maxReceiveCount: 5 }) },
    });
    const [l] = await browseAll(dlq, true);
    const e = await collectMoves(
      adapter.moveLetters(dlq, [req(l, { kind: "origin" }, markersFor(randomUUID()))]),
    ).catch((x: unknown) => x);
    expect((e as BrokerError).kind).toBe("risky_read");
    const [r] = await collectMoves(
      adapter.moveLetters(dlq, [req(l, { kind: "origin" }, markersFor(randomUUID()))], { acceptRisk: true }),
    );
    expect(r.outcome).toBe("moved");
  });
});

describe("SQS moveLetters on moto (no DeadLetterQueueSourceArn)", () => {
  const kit = new SqsKit(MOTO_ENDPOINT);
  const adapter = new SqsAdapter(testConfig(MOTO_ENDPOINT, { queueNamePrefix: kit.prefix, messageMoveTasks: false }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  it("several source queues and no source ARN: 'failed', pick a target; an explicit target works", async () => {
    const { dlq, dlqUrl, dlqArn } = await kit.dlqByRedrive([{ body: text("which") }]);
    await kit.queue(kit.name("work2"), {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
    });
    const [l] = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    const [r] = await collectMoves(adapter.moveLetters(dlq, [req(l, { kind: "origin" }, markersFor(randomUUID()))]));
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/[Pp]ick a target/);
    expect(await depthSoon(kit, dlqUrl, 1)).toBe(1);
    const target = await kit.queue(kit.name("chosen"));
    const [ok] = await collectMoves(
      adapter.moveLetters(dlq, [req(l, { kind: "queue", name: target.name }, markersFor(randomUUID()))]),
    );
    expect(ok.outcome).toBe("moved");
    expect(await depthSoon(kit, target.url, 1)).toBe(1);
    expect(await depthSoon(kit, dlqUrl, 0)).toBe(0);
  });

  it("crowded attributes (9 own) → combined marker on moto too", async () => {
    const { dlq, sourceUrl } = await kit.dlqByRedrive([{ body: text("nine"), attributes: attrsN(9) }], {
      maxReceiveCount: 3,
    });
    const [l] = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    const m = markersFor(randomUUID(), 1, l.messageId);
    expect((await collectMoves(adapter.moveLetters(dlq, [req(l, { kind: "origin" }, m)])))[0].outcome).toBe("moved");
    const [at] = await peekAll(kit, sourceUrl);
    expect(JSON.parse(at.MessageAttributes![COMBINED_MARKER].StringValue!).replayId).toBe(m.replayId);
  });
});
