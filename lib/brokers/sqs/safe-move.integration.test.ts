// Move to safety on real SQS servers: a chained DLQ's letters moved by a message move task into
// `<dlq>-safe` on ElasticMQ, without a receive that would push them on to the DLQ's own DLQ;
// what the move keeps; reading the safe queue costs nothing; refusals; cancel; a running task
// followed; FIFO (not moved by ElasticMQ: refused, nothing lost); moto (no move tasks: not offered).
import { afterAll, describe, expect, it } from "vitest";
import { GetQueueAttributesCommand, GetQueueUrlCommand, type MessageAttributeValue } from "@aws-sdk/client-sqs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { capabilitiesOf } from "@/lib/brokers/contract/adapter";
import type { SafeMoveEvent } from "@/lib/brokers/contract/safe-move";
import { displayText, findHeader } from "@/lib/brokers/display";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, MOTO_ENDPOINT, SqsKit, testConfig } from "@/lib/brokers/sqs/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const errorOf = async (p: Promise<unknown>) =>
  (await p.then(
    () => null,
    (e: unknown) => e,
  )) as BrokerError | null;

async function collect(
  events: AsyncIterable<SafeMoveEvent>,
  onEvent?: (e: SafeMoveEvent) => void,
): Promise<SafeMoveEvent[]> {
  const out: SafeMoveEvent[] = [];
  for await (const e of events) {
    out.push(e);
    onEvent?.(e);
  }
  return out;
}

describe("SQS move to safety on ElasticMQ", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  const adapter = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  /** A queue the adapter created: found by name and deleted with the kit's own. */
  const track = async (name: string) => {
    const { QueueUrl } = await kit.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    kit.urls.add(QueueUrl!);
    return QueueUrl!;
  };
  const exists = (name: string) =>
    kit.sqs.send(new GetQueueUrlCommand({ QueueName: name })).then(
      () => true,
      () => false,
    );
  const attrsOf = async (url: string) =>
    (await kit.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }))).Attributes ?? {};

  /** source → dlq (maxReceiveCount 3 on the source), and the dlq's own redrive policy → dlq-dlq (maxReceiveCount 3). */
  async function chained(
    letters: Array<{ body: Uint8Array; attributes?: Record<string, MessageAttributeValue> }>,
    fifo = false,
  ) {
    const next = await kit.queue(kit.name("dlqdlq", fifo), fifo ? { FifoQueue: "true" } : {});
    const r = await kit.dlqByRedrive(letters, {
      maxReceiveCount: 3,
      fifo,
      dlqAttributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: next.arn, maxReceiveCount: 3 }) },
    });
    return { ...r, next };
  }

  const attributes = (i: number): Record<string, MessageAttributeValue> => ({
    exceptionClass: { DataType: "String", StringValue: "com.acme.OrderRejected" },
    amount: { DataType: "Number", StringValue: `1234567890123456789.${i}` },
    blob: { DataType: "Binary", BinaryValue: Uint8Array.from([0, 255, i]) },
    tenant: { DataType: "String.tenant", StringValue: "acme" },
  });

  it("the risk is real: one read of a chained DLQ pushes letters received 3 times at the source on to its own DLQ", async () => {
    const c = await chained([{ body: text("pushed on") }]);
    const page = await adapter.browse(c.dlq, { offset: 0, limit: 10, acceptRisk: true });
    expect(page.letters).toHaveLength(0);
    expect(await kit.count(c.dlqUrl)).toBe(0);
    expect(await kit.count(c.next.url)).toBe(1);
  });

  it("moves 8 letters of a chained DLQ into <dlq>-safe without a read, keeping what SQS keeps; reading the safe queue costs nothing", async () => {
    const letters = Array.from({ length: 8 }, (_, i) => ({
      body: text(`{"order":${i},"note":"ünïcode ✓"}`),
      attributes: attributes(i),
    }));
    const c = await chained(letters);
    const target = `${c.dlq}-safe`;

    const risk = (await adapter.describeDlq(c.dlq)).readRisk;
    expect(risk).toMatchObject({ kind: "chained-dlq", limit: 3, onwardQueue: c.next.name, countField: "count" });

    const plan = await adapter.safeMove!.plan(c.dlq);
    expect(plan).toMatchObject({ target, targetExists: false, depth: 8 });
    expect(plan.description).toMatch(/no redrive policy/);
    expect(plan.description).toContain(c.next.name);
    const perms = plan.permissions.join("\n");
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
      expect(perms).toContain(a);
    // Planning reads nothing, moves nothing, creates nothing.
    expect(await kit.count(c.dlqUrl)).toBe(8);
    expect(await kit.count(c.next.url)).toBe(0);
    expect(await exists(target)).toBe(false);

    const events = await collect(adapter.safeMove!.move(c.dlq, target));
    expect(events.at(-1)).toEqual({ kind: "progress", moved: 8, failed: 0, total: 8, done: true });
    expect(events.filter((e) => e.kind === "progress" && e.done)).toHaveLength(1);
    expect(events.every((e) => e.kind === "progress")).toBe(true);
    const safeUrl = await track(target);

    expect(await kit.count(c.dlqUrl)).toBe(0);
    expect(await kit.count(c.next.url)).toBe(0);
    expect(await kit.count(safeUrl)).toBe(8);
    expect((await attrsOf(safeUrl)).RedrivePolicy).toBeUndefined();

    const safe = await adapter.describeDlq(target);
    expect(safe).toMatchObject({ readRisk: null, origins: [c.source], depth: 8 });
    expect(displayText(safe.facts.find((f) => f.name === "safe copy")?.value)).toBe(
      `safe copy of ${c.dlq}, made by the console's move to safety`,
    );
    expect(safe.warnings.map((w) => w.code)).not.toContain("no_source");
    expect((await adapter.listDlqs()).map((d) => d.name)).toContain(target);

    // No acceptRisk: the safe queue is no risky read. Five reads move nothing anywhere.
    for (let read = 1; read <= 5; read++) {
      const page = await adapter.browse(target, { offset: 0, limit: 20 });
      expect(page.letters).toHaveLength(8);
      if (read === 1) {
        // Kept by ElasticMQ's move task: MessageId, body bytes, message attributes with their data
        // types, DeadLetterQueueSourceArn (the original source). Not kept: ApproximateReceiveCount
        // (it starts again: 1 at this first read, where the DLQ had 3 from the source).
        expect(page.letters.map((l) => l.messageId).sort()).toEqual([...c.messageIds].sort());
        expect(page.letters.map((l) => Buffer.from(l.body).toString("utf8")).sort()).toEqual(
          letters.map((l) => Buffer.from(l.body).toString("utf8")).sort(),
        );
        for (const l of page.letters) {
          const i = JSON.parse(Buffer.from(l.body).toString("utf8")).order as number;
          expect(findHeader(l.headers, "exceptionClass")).toEqual({ t: "string", v: "com.acme.OrderRejected" });
          expect(findHeader(l.headers, "amount")).toEqual({ t: "number", v: `1234567890123456789.${i}` });
          expect(findHeader(l.headers, "blob")).toMatchObject({
            t: "bytes",
            v: Buffer.from([0, 255, i]).toString("base64"),
            size: 3,
          });
          expect(findHeader(l.headers, "tenant")).toEqual({ t: "string", v: "acme" });
          expect(displayText(l.properties.find((p) => p.name === "MessageAttribute DataTypes")?.value)).toContain(
            "tenant=String.tenant",
          );
          expect(displayText(l.properties.find((p) => p.name === "DeadLetterQueueSourceArn")?.value)).toBe(
            `arn:aws:sqs:us-east-1:000000000000:${c.source}`,
          );
          expect(l.failure).toMatchObject({
            originQueue: c.source,
            reason: "maxReceiveCount",
            exceptionClass: "com.acme.OrderRejected",
            count: 1,
          });
        }
      }
    }
    expect(await kit.count(safeUrl)).toBe(8);
    expect(await kit.count(c.next.url)).toBe(0);
    expect(await kit.count(c.dlqUrl)).toBe(0);

    // Again, on the now empty DLQ: ends at once, nothing moved; the safe queue exists now.
    const plan2 = await adapter.safeMove!.plan(c.dlq);
    expect(plan2).toMatchObject({ target, targetExists: true, depth: 0 });
    expect(await collect(adapter.safeMove!.move(c.dlq, target))).toEqual([
      { kind: "progress", moved: 0, failed: 0, total: 0, done: true },
    ]);
    expect(await kit.count(safeUrl)).toBe(8);
  });

  it("refuses a target with a redrive policy of its own, the DLQ itself, and the wrong queue type: nothing moved", async () => {
    const c = await chained([{ body: text("a"), attributes: attributes(1) }, { body: text("b") }]);
    const risky = await kit.queue(kit.name("risky"), {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: c.next.arn, maxReceiveCount: 5 }),
    });
    const e = await errorOf(collect(adapter.safeMove!.move(c.dlq, risky.name)));
    expect(e).toBeInstanceOf(BrokerError);
    expect(e!.kind).toBe("bad_request");
    expect(e!.userMessage).toMatch(/redrive policy of its own/);
    expect((await errorOf(collect(adapter.safeMove!.move(c.dlq, c.dlq))))?.kind).toBe("bad_request");
    expect((await errorOf(collect(adapter.safeMove!.move(c.dlq, `${c.dlq}-safe.fifo`))))?.kind).toBe("bad_request");
    expect(await kit.count(c.dlqUrl)).toBe(2);
    expect(await kit.count(risky.url)).toBe(0);
    expect(await kit.count(c.next.url)).toBe(0);
    expect(await exists(`${c.dlq}-safe`)).toBe(false);
  });

  it("a DLQ that does not exist, or a queue that is no DLQ: not_found", async () => {
    const missing = `${kit.prefix}-nope`;
    expect((await errorOf(adapter.safeMove!.plan(missing)))?.kind).toBe("not_found");
    expect((await errorOf(collect(adapter.safeMove!.move(missing, `${missing}-safe`))))?.kind).toBe("not_found");
    const plain = await kit.queue(kit.name("plain"));
    expect((await errorOf(adapter.safeMove!.plan(plain.name)))?.kind).toBe("not_found");
    expect(await exists(`${missing}-safe`)).toBe(false);
  });

  it("cancels the move task on abort and reports what moved; every letter is in one of the two queues", async () => {
    const slow = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
      allManagedHeaders: MANAGED_HEADERS,
      safeMoveMaxPerSecond: 5,
      safeMovePollMs: 200,
    });
    try {
      const c = await kit.dlqByRedrive(Array.from({ length: 30 }, (_, i) => ({ body: text(`c-${i}`) })));
      const target = `${c.dlq}-safe`;
      const ac = new AbortController();
      const events = await collect(slow.safeMove!.move(c.dlq, target, { signal: ac.signal }), (e) => {
        if (e.kind === "progress" && e.moved > 0) ac.abort();
      });
      const last = events.at(-1)!;
      expect(last).toMatchObject({ kind: "progress", done: true, failed: 0, total: 30 });
      const moved = last.kind === "progress" ? last.moved : -1;
      expect(moved).toBeGreaterThan(0);
      expect(moved).toBeLessThan(30);
      const safeUrl = await track(target);
      await new Promise((r) => setTimeout(r, 600)); // a cancelled task moves nothing more
      expect(await kit.count(safeUrl)).toBe(moved);
      expect(await kit.count(c.dlqUrl)).toBe(30 - moved);
    } finally {
      await slow.close();
    }
  });

  it("follows a move task already running to the same queue; refuses while one runs to another", async () => {
    const slow = new SqsAdapter(testConfig(ELASTICMQ_ENDPOINT, { queueNamePrefix: kit.prefix }), {
      allManagedHeaders: MANAGED_HEADERS,
      safeMoveMaxPerSecond: 10,
      safeMovePollMs: 200,
    });
    try {
      const c = await kit.dlqByRedrive(Array.from({ length: 20 }, (_, i) => ({ body: text(`f-${i}`) })));
      const target = `${c.dlq}-safe`;
      // The caller stops listening (as a console that stops would): the task keeps running on SQS.
      for await (const e of slow.safeMove!.move(c.dlq, target)) if (e.kind === "progress") break;
      const safeUrl = await track(target);
      const other = await kit.queue(kit.name("other"));
      const e = await errorOf(collect(adapter.safeMove!.move(c.dlq, other.name)));
      expect(e?.kind).toBe("bad_request");
      expect(e!.userMessage).toMatch(/already running/);
      expect(await kit.count(other.url)).toBe(0);
      const events = await collect(adapter.safeMove!.move(c.dlq, target));
      expect(events.at(-1)).toMatchObject({ kind: "progress", moved: 20, done: true });
      expect(await kit.count(safeUrl)).toBe(20);
      expect(await kit.count(c.dlqUrl)).toBe(0);
    } finally {
      await slow.close();
    }
  });

  it("FIFO: the safe queue is FIFO; ElasticMQ's move task moves no FIFO letter, which is refused with every letter still in the DLQ", async () => {
    const c = await chained(
      [0, 1, 2].map((i) => ({ body: text(`fifo-${i}`), attributes: attributes(i) })),
      true,
    );
    const plan = await adapter.safeMove!.plan(c.dlq);
    expect(plan.target).toBe(`${c.dlq.slice(0, -".fifo".length)}-safe.fifo`);
    const e = await errorOf(collect(adapter.safeMove!.move(c.dlq, plan.target)));
    const safeUrl = await track(plan.target);
    expect((await attrsOf(safeUrl)).FifoQueue).toBe("true");
    if (e) {
      expect(e.userMessage).toMatch(/moved none of the 3 letters/);
      expect(await kit.count(c.dlqUrl)).toBe(3);
      expect(await kit.count(safeUrl)).toBe(0);
    } else {
      expect(await kit.count(safeUrl)).toBe(3);
      expect(await kit.count(c.dlqUrl)).toBe(0);
    }
    expect(await kit.count(c.next.url)).toBe(0);
  });
});

describe("SQS move to safety on moto (no message move tasks: not offered)", () => {
  const adapter = new SqsAdapter(testConfig(MOTO_ENDPOINT, { messageMoveTasks: false }), {
    allManagedHeaders: MANAGED_HEADERS,
  });
  afterAll(() => adapter.close());

  it("declares safeMove false: the adapter offers no move to safety", () => {
    expect(capabilitiesOf(adapter).safeMove).toBe(false);
    expect(adapter.safeMove).toBeUndefined();
  });
});
