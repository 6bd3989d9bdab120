import amqp, { type ConsumeMessage } from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { capabilitiesOf } from "@/lib/brokers/contract/adapter";
import type { SafeMoveEvent } from "@/lib/brokers/contract/safe-move";
import { sha256Hex } from "@/lib/brokers/display";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { baseLetterId } from "@/lib/brokers/rabbitmq/identity";
import { installRawHeaderHook, rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { AMQP_URL, RabbitKit, mgmtRequest, testConfig, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
const QUORUM_LIMIT_3 = { "x-queue-type": "quorum", "x-delivery-limit": 3 };
const BINARY = Uint8Array.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x01]); // not valid UTF-8

afterAll(async () => {
  await adapter.close();
  await kit.cleanup();
});

const letters = () =>
  Array.from({ length: 10 }, (_, i) => ({
    body: i === 4 ? BINARY : new TextEncoder().encode(JSON.stringify({ order: i, note: "é ✓" })),
    messageId: `safe-${i}`,
    headers: { "x-tenant": `tenant-${i % 3}`, "x-trace": `trace-${i}` },
    props: { contentType: i === 4 ? "application/octet-stream" : "application/json", correlationId: `corr-${i}` },
  }));

async function collect(it: AsyncIterable<SafeMoveEvent>): Promise<SafeMoveEvent[]> {
  const out: SafeMoveEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Every letter of a queue, in order, with its raw basic.properties; consumed without ack, so all go back when the connection closes. */
async function peekRaw(queue: string): Promise<Array<{ m: ConsumeMessage; raw: Buffer | null }>> {
  const conn = await amqp.connect(AMQP_URL);
  installRawHeaderHook(conn);
  try {
    const ch = await conn.createChannel();
    const n = (await ch.checkQueue(queue)).messageCount;
    await ch.prefetch(1000);
    const out: Array<{ m: ConsumeMessage; raw: Buffer | null }> = [];
    await new Promise<void>((resolve) => {
      if (n === 0) return resolve();
      void ch.consume(queue, (m) => {
        if (!m) return;
        out.push({ m, raw: rawPropertiesOf(m.properties) });
        if (out.length === n) resolve();
      });
    });
    return out;
  } finally {
    await conn.close().catch(() => undefined);
  }
}

describe("rabbitmq: move to safety from a quorum DLQ with a delivery limit", () => {
  it("plans without reading, moves every letter once byte for byte into a classic queue, which can then be read freely", async () => {
    const input = letters();
    const { dlq, source } = await kit.dlqByReject(input, QUORUM_LIMIT_3);
    const target = `${dlq}.safe`;
    kit.queues.add(target);

    const summary = await adapter.describeDlq(dlq);
    expect(summary.queueType).toBe("quorum");
    expect(summary.readRisk).toMatchObject({
      kind: "delivery-limit",
      limit: 3,
      countField: "deliveryCount",
      onwardQueue: null,
      nextReadLosesAt: 2,
    });
    expect(capabilitiesOf(adapter).safeMove).toBe(true);

    const plan = await adapter.safeMove.plan(dlq);
    expect(plan).toMatchObject({ target, targetExists: false, depth: 10 });
    expect(plan.description).toMatch(/classic queue/);
    expect(plan.description).toMatch(/x-death/);
    expect(plan.permissions.join("\n")).toMatch(new RegExp(`configure on queue "${target.replace(/\./g, "\\.")}"`));
    expect(plan.permissions.join("\n")).toMatch(/write on exchange "amq\.default"/);
    expect(plan.permissions.join("\n")).toMatch(new RegExp(`read on queue "${dlq.replace(/\./g, "\\.")}"`));
    expect(plan.permissions.join("\n")).toMatch(/management/);
    // Planning read nothing: nothing unacked, nothing delivered (the management API counts deliveries).
    expect(await kit.depth(dlq)).toBe(10);
    const q = (await (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(dlq)}`)).json()) as {
      messages_unacknowledged?: number;
      message_stats?: { deliver_get?: number };
    };
    expect(q.messages_unacknowledged ?? 0).toBe(0);
    expect(q.message_stats?.deliver_get ?? 0).toBe(0);

    const events = await collect(adapter.safeMove.move(dlq, target));
    const letterEvents = events.filter((e) => e.kind === "letter");
    expect(letterEvents).toHaveLength(10);
    expect(letterEvents.map((e) => e.outcome)).toEqual(Array(10).fill("moved"));
    expect(letterEvents.map((e) => e.messageId)).toEqual(input.map((l) => l.messageId));
    const ids = input.map((l) => baseLetterId(l.messageId, () => "unused"));
    expect(letterEvents.map((e) => e.letterId)).toEqual(ids);
    expect(letterEvents.map((e) => e.sha256)).toEqual(input.map((l) => sha256Hex(l.body)));
    expect(letterEvents.map((e) => e.bodySize)).toEqual(input.map((l) => l.body.length));
    expect(letterEvents.every((e) => e.reason === null)).toBe(true);
    expect(events.at(-1)).toEqual({ kind: "progress", moved: 10, failed: 0, total: 10, done: true });
    expect(await kit.depth(dlq)).toBe(0);

    const info = (await (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(target)}`)).json()) as {
      type: string;
      durable: boolean;
      arguments: Record<string, unknown>;
    };
    expect(info.type).toBe("classic");
    expect(info.durable).toBe(true);
    for (const k of [
      "x-dead-letter-exchange",
      "x-message-ttl",
      "x-max-length",
      "x-max-length-bytes",
      "x-expires",
      "x-delivery-limit",
    ])
      expect(info.arguments).not.toHaveProperty(k);

    // Byte for byte, in order, with the history RabbitMQ wrote and no marker of the console.
    const copies = await peekRaw(target);
    expect(copies).toHaveLength(10);
    copies.forEach(({ m, raw }, i) => {
      expect(Buffer.compare(m.content, Buffer.from(input[i].body))).toBe(0);
      expect(m.properties.messageId).toBe(input[i].messageId);
      expect(m.properties.contentType).toBe(input[i].props.contentType);
      expect(m.properties.correlationId).toBe(input[i].props.correlationId);
      expect(m.properties.deliveryMode).toBe(2);
      const h = m.properties.headers ?? {};
      expect(h["x-tenant"]).toBe(input[i].headers["x-tenant"]);
      expect(h["x-trace"]).toBe(input[i].headers["x-trace"]);
      const xDeath = h["x-death"] as unknown as Array<Record<string, unknown>>;
      expect(xDeath).toHaveLength(1);
      expect(xDeath[0]).toMatchObject({ queue: source, reason: "rejected", count: 1 });
      expect(Object.keys(h).filter((k) => k.startsWith("x-dlq-"))).toEqual([]);
      expect(raw).not.toBeNull();
      // Read once by the move only: the quorum queue's delivery count of a first delivery (none or 0).
      expect(Number(h["x-delivery-count"] ?? 0)).toBe(0);
    });

    // The safe queue is a DLQ the console shows, where reading costs nothing.
    const safe = await adapter.describeDlq(target);
    expect(safe.readRisk).toBeNull();
    expect(safe.queueType).toBe("classic");
    expect(safe.origins).toEqual([source]);
    expect(safe.facts).toContainEqual({
      name: "safe copy",
      value: { t: "string", v: `safe copy of "${dlq}", made by the console's move to safety` },
    });
    const listed = (await adapter.listDlqs()).find((d) => d.name === target);
    expect(listed?.readRisk).toBeNull();
    expect(listed?.origins).toEqual([source]);
    for (let i = 0; i < 5; i++) {
      const page = await adapter.browse(target, { offset: 0, limit: 50 });
      expect(page.letters.map((l) => l.id)).toEqual(ids);
      expect(page.letters[4].body).toEqual(Buffer.from(BINARY));
      expect(page.letters[0].history[0]).toMatchObject({ queue: source, reason: "rejected" });
    }
    expect(await kit.depth(target)).toBe(10);

    // Again on the now empty DLQ: nothing to move.
    expect(await collect(adapter.safeMove.move(dlq, target))).toEqual([
      { kind: "progress", moved: 0, failed: 0, total: 0, done: true },
    ]);
    expect((await adapter.safeMove.plan(dlq)).targetExists).toBe(true);
    expect(await kit.depth(target)).toBe(10);
  });

  it("moves hundreds of letters across read windows in bounded steps, with progress every 100", async () => {
    const n = 250;
    const input = Array.from({ length: n }, (_, i) => ({
      body: new TextEncoder().encode(`letter ${i}`),
      messageId: `bulk-${i}`,
    }));
    const { dlq } = await kit.dlqByReject(input, QUORUM_LIMIT_3);
    const target = `${dlq}.safe`;
    kit.queues.add(target);
    const small = new RabbitMqAdapter(testConfig(), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
      moveInFlight: 4,
    });
    try {
      const events = await collect(small.safeMove.move(dlq, target));
      const moved = events.filter((e) => e.kind === "letter" && e.outcome === "moved");
      expect(moved.map((e) => e.kind === "letter" && e.messageId)).toEqual(input.map((l) => l.messageId));
      expect(events.filter((e) => e.kind === "progress")).toEqual([
        { kind: "progress", moved: 100, failed: 0, total: n, done: false },
        { kind: "progress", moved: 200, failed: 0, total: n, done: false },
        { kind: "progress", moved: n, failed: 0, total: n, done: true },
      ]);
      expect(await kit.depth(dlq)).toBe(0);
      expect((await peekRaw(target)).map(({ m }) => m.properties.messageId)).toEqual(input.map((l) => l.messageId));
    } finally {
      await small.close();
    }
  });

  it("a copy RabbitMQ returns (the target deleted during the move) is a failed letter that stays in the DLQ", async () => {
    const n = 12;
    const input = Array.from({ length: n }, (_, i) => ({
      body: new TextEncoder().encode(`letter ${i}`),
      messageId: `ret-${i}`,
    }));
    const { dlq } = await kit.dlqByReject(input, QUORUM_LIMIT_3);
    const target = `${dlq}.safe`;
    kit.queues.add(target);
    const one = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500, moveInFlight: 1 });
    try {
      const events: SafeMoveEvent[] = [];
      for await (const e of one.safeMove.move(dlq, target)) {
        events.push(e);
        // The generator is paused here: no copy is in flight while the target goes.
        if (events.filter((x) => x.kind === "letter").length === 3 && (await kit.depth(target)) === 3)
          await (await kit.channel()).deleteQueue(target);
      }
      const outcomes = events.flatMap((e) => (e.kind === "letter" ? [e.outcome] : []));
      expect(outcomes).toEqual([...Array(3).fill("moved"), ...Array(n - 3).fill("failed")]);
      const failed = events.filter((e) => e.kind === "letter" && e.outcome === "failed");
      for (const f of failed)
        expect(f.kind === "letter" && f.reason).toMatch(
          /returned it as unroutable.*counts that as one delivery against the delivery limit of 3/s,
        );
      expect(events.at(-1)).toEqual({ kind: "progress", moved: 3, failed: n - 3, total: n, done: true });
      await kit.waitDepth(dlq, n - 3, 5000);
      const page = await one.browse(dlq, { offset: 0, limit: 50, acceptRisk: true });
      expect(page.letters.map((l) => l.messageId)).toEqual(input.slice(3).map((l) => l.messageId));
      expect(page.letters.every((l) => l.failure.deliveryCount === 1)).toBe(true);
    } finally {
      await one.close();
    }
  });

  it("refuses a target that exists as a quorum queue, and the DLQ itself as target; nothing is moved", async () => {
    const { dlq } = await kit.dlqByReject(letters().slice(0, 3), QUORUM_LIMIT_3);
    const target = await kit.queue(`${dlq}.safe`, { "x-queue-type": "quorum" });
    expect(await adapter.safeMove.plan(dlq)).toMatchObject({ target, targetExists: true, depth: 3 });
    for (const to of [target, dlq]) {
      const e = await collect(adapter.safeMove.move(dlq, to)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(BrokerError);
      expect((e as BrokerError).kind).toBe("bad_request");
    }
    expect(await kit.depth(dlq)).toBe(3);
    expect(await kit.depth(target)).toBe(0);
    // Nothing was read either: a read then would have raised the delivery count.
    const q = (await (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(dlq)}`)).json()) as {
      message_stats?: { deliver_get?: number };
    };
    expect(q.message_stats?.deliver_get ?? 0).toBe(0);
  });

  it("a DLQ that does not exist is not_found, for the plan and the move", async () => {
    const missing = kit.name("no-such-dlq");
    // One at a time: started together, the second refusal could come before anything listened for it.
    for (const start of [
      () => adapter.safeMove.plan(missing),
      () => collect(adapter.safeMove.move(missing, `${missing}.safe`)),
    ]) {
      const e = await start().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(BrokerError);
      expect((e as BrokerError).kind).toBe("not_found");
    }
    const e = await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(`${missing}.safe`)}`);
    expect(e.status).toBe(404);
  });

  it("names the target with the connection's safeQueueSuffix", async () => {
    const { dlq } = await kit.dlqByReject(letters().slice(0, 1), QUORUM_LIMIT_3);
    const a = new RabbitMqAdapter(testConfig({ safeQueueSuffix: ".parked" }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
    });
    try {
      expect((await a.safeMove.plan(dlq)).target).toBe(`${dlq}.parked`);
    } finally {
      await a.close();
    }
  });
});
