import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { ANSWER_MS } from "@/lib/brokers/rabbitmq/reader";
import { AMQP_URL, RabbitKit, mgmtRequest, testAmqpUrlVia, testConfig, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { CuttableProxy } from "@/test/tcp-proxy";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
const text = (s: string) => new TextEncoder().encode(s);

afterAll(async () => {
  await adapter.close();
  await kit.cleanup();
});

describe("rabbitmq: failure metadata from real dead-lettering", () => {
  it("rejected, expired and maxlen letters carry x-death; history is most recent first", async () => {
    const dlq = await kit.queue(kit.name("dlq"));
    const dl = { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq };
    const rejectQ = await kit.queue(kit.name("reject"), dl);
    const ttlQ = await kit.queue(kit.name("ttl"), { ...dl, "x-message-ttl": 1 });
    const maxQ = await kit.queue(kit.name("maxlen"), { ...dl, "x-max-length": 1 });
    await kit.publish(rejectQ, { body: text("r") });
    await kit.rejectAll(rejectQ, 1);
    await kit.waitDepth(dlq, 1);
    await kit.publish(ttlQ, { body: text("t") });
    await kit.waitDepth(dlq, 2);
    await kit.publish(maxQ, { body: text("m1") });
    await kit.publish(maxQ, { body: text("m2") });
    await kit.waitDepth(dlq, 3);

    const { letters } = await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect(letters.map((l) => [l.failure.reason, l.failure.originQueue])).toEqual([
      ["rejected", rejectQ],
      ["expired", ttlQ],
      ["maxlen", maxQ],
    ]);
    const h = letters[0].history[0];
    expect(h.queue).toBe(rejectQ);
    expect(h.count).toBe(1);
    expect(h.exchange).toBe("");
    expect(h.routingKeys).toEqual([rejectQ]);
    expect(h.time).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(letters[0].failure.deadLetteredAt).toBe(h.time);
    expect(letters[0].headers.find((x) => x.name === "x-first-death-reason")?.value).toEqual({
      t: "string",
      v: "rejected",
    });

    // Two hops: hop1 → hop2 → park2.
    const park2 = await kit.queue(kit.name("park2"));
    const hop2 = await kit.queue(kit.name("hop2"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": park2,
    });
    const hop1 = await kit.queue(kit.name("hop1"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": hop2 });
    await kit.publish(hop1, { body: text("two hops") });
    await kit.rejectAll(hop1, 1);
    await kit.waitDepth(hop2, 1);
    await kit.rejectAll(hop2, 1);
    await kit.waitDepth(park2, 1);
    const [twoHops] = (await adapter.browse(park2, { offset: 0, limit: 1 })).letters;
    expect(twoHops.history.map((d) => d.queue)).toEqual([hop2, hop1]);
    expect(twoHops.failure.originQueue).toBe(hop2);
    expect(twoHops.headers.find((x) => x.name === "x-first-death-queue")?.value).toEqual({ t: "string", v: hop1 });
  });

  it("reads Spring AMQP republished exception headers and hundreds of headers", async () => {
    const dlq = await kit.queue(kit.name("spring-dlq"));
    kit.queues.add(dlq);
    // Spring's RepublishMessageRecoverer publishes the failed message straight to the DLQ with these headers.
    await kit.publish(dlq, {
      body: text('{"orderId":42}'),
      headers: {
        "x-exception-message": "Order 42 has no customer",
        "x-exception-stacktrace":
          "com.acme.orders.InvalidOrderException: Order 42 has no customer\n\tat com.acme.orders.Handler.handle(Handler.java:42)",
        "x-original-exchange": "",
        "x-original-routingKey": "orders",
      },
    });
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i++) many[`x-h-${i}`] = `value ${i}`;
    await kit.publish(dlq, { body: text("many"), headers: many });
    // Discovery does not know a DLQ fed by republishing: name it in config.
    const a = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq, origin: "orders" }] }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 500,
    });
    try {
      const { letters } = await a.browse(dlq, { offset: 0, limit: 10 });
      expect(letters[0].failure.exceptionClass).toBe("com.acme.orders.InvalidOrderException");
      expect(letters[0].failure.exceptionMessage).toBe("Order 42 has no customer");
      expect(letters[0].failure.originQueue).toBe("orders");
      expect(letters[0].failure.reason).toBe("exception");
      expect(letters[1].headers).toHaveLength(300);
      expect(letters[1].headers[299]).toEqual({ name: "x-h-299", value: { t: "string", v: "value 299" } });
    } finally {
      await a.close();
    }
  });
});

describe("rabbitmq: quorum DLQ with a delivery limit", () => {
  it("every read counts as a delivery and letters are dropped; reads are refused without acceptRisk", async () => {
    const { dlq } = await kit.dlqByReject(
      [0, 1, 2].map((i) => ({ body: text(`q-${i}`) })),
      { "x-queue-type": "quorum", "x-delivery-limit": 2 },
    );
    const summary = await adapter.describeDlq(dlq);
    expect(summary.queueType).toBe("quorum");
    expect(summary.readRisk).toMatchObject({ kind: "delivery-limit", limit: 2 });

    // One at a time: a read started early would reject while the loop awaits another, unobserved.
    for (const read of [
      () => adapter.browse(dlq, { offset: 0, limit: 10 }),
      () => adapter.getLetter(dlq, "f-x"),
      () => adapter.stream(dlq)[Symbol.asyncIterator]().next(),
    ]) {
      const e = await read().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(BrokerError);
      expect((e as BrokerError).code).toBe("confirmation_required:read");
    }
    expect(await kit.depth(dlq)).toBe(3);

    // With the risk accepted, prove it: x-delivery-count rises on every read until RabbitMQ drops the letters.
    const counts: Array<number | null> = [];
    let reads = 0;
    while (reads < 8) {
      reads++;
      const page = await adapter.browse(dlq, { offset: 0, limit: 10, acceptRisk: true });
      // On a loaded machine the letters of the last read may still be on their way back into the
      // queue (the broker requeues them after the channel closes): empty only when RabbitMQ says so.
      if (page.letters.length === 0) {
        if ((await kit.depth(dlq)) === 0) break;
        continue;
      }
      counts.push(page.letters[0].failure.deliveryCount);
    }
    // RabbitMQ 3.10: the first delivery carries no x-delivery-count, the next ones 1, 2, ...
    console.info(
      `quorum x-delivery-limit 2: x-delivery-count per read ${JSON.stringify(counts)}, empty after ${reads} reads`,
    );
    expect(counts[1]).toBe(1);
    expect(await kit.depth(dlq)).toBe(0);
    expect(reads).toBeLessThanOrEqual(5);
  });

  it("without the management API, a probe flags a non-classic queue and configured DLQs are still served", async () => {
    const { dlq } = await kit.dlqByReject([{ body: text("q") }], { "x-queue-type": "quorum", "x-delivery-limit": 5 });
    const { dlq: classic } = await kit.dlqByReject([{ body: text("c") }]);
    const a = new RabbitMqAdapter(
      testConfig({ management: { url: "http://127.0.0.1:1" }, dlqs: [{ name: dlq }, { name: classic }] }),
      { allManagedHeaders: MANAGED_HEADERS, idleMs: 500, connectTimeoutMs: 1000 },
    );
    try {
      const list = await a.listDlqs();
      const q = list.find((d) => d.name === dlq)!;
      expect(q.warnings.map((w) => w.code)).toContain("management_unavailable");
      expect(q.readRisk?.kind).toBe("unknown-queue-type");
      expect(q.depth).toBe(1);
      const c = list.find((d) => d.name === classic)!;
      expect(c.readRisk).toBeNull();
      expect((await a.browse(classic, { offset: 0, limit: 5 })).letters).toHaveLength(1);
      await expect(a.browse(dlq, { offset: 0, limit: 5 })).rejects.toMatchObject({ kind: "risky_read" });
      expect(await kit.depth(classic)).toBe(1);
      // A queue the console could only know by discovery cannot be confirmed while the management
      // API is away: a transient "unreachable" (a redrive pauses and retries), not "not found".
      const { dlq: unconfigured } = await kit.dlqByReject([{ body: text("u") }]);
      await expect(a.describeDlq(unconfigured)).rejects.toMatchObject({
        kind: "unreachable",
        code: "unavailable:broker",
      });
      expect(await kit.depth(unconfigured)).toBe(1);
    } finally {
      await a.close();
    }
  });
});

describe("rabbitmq: the queue-type probe (no management API) is a read like any other", () => {
  it("waits for another console's read of the DLQ, so it never takes a letter from under it", async () => {
    const { dlq } = await kit.dlqByReject(Array.from({ length: 3 }, (_, i) => ({ body: text(`p-${i}`) })));
    const reader = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
    const prober = new RabbitMqAdapter(
      testConfig({ management: { url: "http://127.0.0.1:1" }, dlqs: [{ name: dlq }] }),
      { allManagedHeaders: MANAGED_HEADERS, idleMs: 500, connectTimeoutMs: 1000 },
    );
    const holder = reader.stream(dlq)[Symbol.asyncIterator]();
    try {
      expect((await holder.next()).done).toBe(false); // the other console's read holds the DLQ
      const order: string[] = [];
      const described = prober.describeDlq(dlq).then((d) => {
        order.push("probe");
        return d;
      });
      await new Promise((r) => setTimeout(r, 600));
      order.push("read ends");
      await holder.return?.(undefined);
      const summary = await described;
      expect(order).toEqual(["read ends", "probe"]);
      expect(summary.readRisk).toBeNull(); // classic, found by the probe
      expect(summary.depth).toBe(3);
      expect(await kit.depth(dlq)).toBe(3);
    } finally {
      await holder.return?.(undefined);
      await prober.close();
      await reader.close();
    }
  });
});

describe("rabbitmq: a connection lost in the middle of a walk", () => {
  it("fails the call as unreachable; letters not reached are never reported missing and stay in the DLQ", async () => {
    const { dlq } = await kit.dlqByReject(
      Array.from({ length: 6 }, (_, i) => ({ body: text(`walk-${i}`), messageId: `walk-${i}` })),
    );
    const a = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
    try {
      const letters = (await a.browse(dlq, { offset: 0, limit: 10 })).letters;
      expect(letters).toHaveLength(6);
      const outcomes: string[] = [];
      let calls = 0;
      const run = async () => {
        for await (const r of a.removeLetters(
          dlq,
          letters.map((l) => ({ letterId: l.id, sha256: l.sha256 })),
          {
            operationId: randomUUID(),
            beforeRemove: async () => {
              if (++calls === 2) {
                // The broker closes the adapter's connection (CONNECTION_FORCED, as when a node
                // stops): found by its client port in the management API, closed through it.
                const model = await (
                  a as unknown as { amqp: { get(): Promise<{ connection: { stream: { localPort: number } } }> } }
                ).amqp.get();
                const port = model.connection.stream.localPort;
                let name: string | undefined;
                for (let i = 0; i < 100 && !name; i++) {
                  const list = (await (
                    await mgmtRequest("GET", "api/connections?columns=name,peer_port")
                  ).json()) as Array<{ name: string; peer_port: number }>;
                  name = list.find((c) => c.peer_port === port)?.name;
                  if (!name) await new Promise((r) => setTimeout(r, 100)); // the management API lists new connections after a few seconds
                }
                expect(name).toBeDefined();
                expect(
                  (await mgmtRequest("DELETE", `api/connections/${encodeURIComponent(name!)}`)).status,
                ).toBeLessThan(300);
                await new Promise((r) => setTimeout(r, 300));
              }
            },
          },
        ))
          outcomes.push(r.outcome);
      };
      await expect(run()).rejects.toMatchObject({ kind: "unreachable" });
      expect(outcomes).not.toContain("missing");
      // At most the first letter was removed (its copy was safe and its ack sent; an ack has no
      // confirmation in AMQP, so one lost with the connection leaves a duplicate, never a loss).
      const removed = outcomes.filter((o) => o === "removed").length;
      expect(removed).toBeLessThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 500));
      expect(await kit.depth(dlq)).toBeGreaterThanOrEqual(6 - removed);
    } finally {
      await a.close();
    }
  });
});

describe("rabbitmq: grouped acks", () => {
  it("acks runs of moved letters together, never past a letter left in the DLQ on purpose (not requested, checksum mismatch, returned unroutable)", async () => {
    // 40 letters: 0-9 moved (a run below any hole), 10 not requested, 11 a checksum mismatch,
    // 12-24 moved, 25 returned unroutable (its origin queue was deleted), 26-35 moved, 36-39 not requested.
    const n = 40;
    const dlq = await kit.queue(kit.name("dlq"));
    const dl = { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq };
    const work = await kit.queue(kit.name("work"), dl);
    const gone = await kit.queue(kit.name("gone"), dl);
    const deadLetter = async (queue: string, from: number, to: number) => {
      for (let i = from; i < to; i++) await kit.publish(queue, { body: text(`ack-${i}`), messageId: `ack-${i}` });
      await kit.rejectAll(queue, to - from);
      await kit.waitDepth(dlq, to);
    };
    await deadLetter(work, 0, 25);
    await deadLetter(gone, 25, 26);
    await deadLetter(work, 26, n);
    await (await kit.channel()).deleteQueue(gone);
    const target = await kit.queue(kit.name("ack-target"));
    const letters = (await adapter.browse(dlq, { offset: 0, limit: n })).letters;
    expect(letters).toHaveLength(n);
    const left = new Set([10, 11, 25, 36, 37, 38, 39]);
    const reqs = letters
      .map((l, i) => ({ l, i }))
      .filter(({ i }) => i !== 10 && i < 36)
      .map(({ l, i }) => ({
        letterId: l.id,
        sha256: i === 11 ? "0".repeat(64) : l.sha256,
        target: i === 25 ? ({ kind: "origin" } as const) : ({ kind: "queue", name: target } as const),
        markers: { redriveId: randomUUID(), replayId: randomUUID(), redriveCount: 1, originalMessageId: l.messageId },
      }));
    const outcomes = new Map<string, string>();
    for await (const r of adapter.moveLetters(dlq, reqs, { maxInFlight: 16 })) outcomes.set(r.letterId, r.outcome);
    expect(outcomes.get(letters[11].id)).toBe("checksum_mismatch");
    expect(outcomes.get(letters[25].id)).toBe("failed");
    expect([...outcomes.values()].filter((o) => o === "moved")).toHaveLength(n - left.size);
    await kit.waitDepth(target, n - left.size);
    // Exactly the letters left on purpose are still in the DLQ, in order.
    await kit.waitDepth(dlq, left.size);
    const after = (await adapter.browse(dlq, { offset: 0, limit: n })).letters;
    expect(after.map((l) => l.messageId)).toEqual([...left].sort((a, b) => a - b).map((i) => `ack-${i}`));
  });
});

describe("rabbitmq: discovery and connection failures", () => {
  it("discovers DLQs through a DLX exchange binding and through a policy, with their origins", async () => {
    const dlx = await kit.exchange(kit.name("dlx"), "direct");
    const dlqA = await kit.queue(kit.name("dlq-a"));
    const ch = await kit.channel();
    await ch.bindQueue(dlqA, dlx, "orders-failed");
    const src = await kit.queue(kit.name("src"), {
      "x-dead-letter-exchange": dlx,
      "x-dead-letter-routing-key": "orders-failed",
    });

    const dlqB = await kit.queue(kit.name("dlq-b"));
    const polSrc = await kit.queue(kit.name("polsrc"));
    const policy = `${kit.prefix}-dl`;
    kit.policies.add(policy);
    const res = await mgmtRequest("PUT", `api/policies/${VHOST}/${encodeURIComponent(policy)}`, {
      pattern: `^${polSrc.replace(/\./g, "\\.")}$`,
      definition: { "dead-letter-exchange": "", "dead-letter-routing-key": dlqB },
      "apply-to": "queues",
      priority: 10,
    });
    expect(res.ok).toBe(true);
    let list = await adapter.listDlqs();
    for (let i = 0; i < 40 && !list.some((d) => d.name === dlqB); i++) {
      await new Promise((r) => setTimeout(r, 250));
      list = await adapter.listDlqs();
    }
    expect(list.find((d) => d.name === dlqA)).toMatchObject({ source: "discovered", origins: [src] });
    expect(list.find((d) => d.name === dlqB)).toMatchObject({ source: "discovered", origins: [polSrc] });
    expect(list.some((d) => d.name === src)).toBe(false);
  });

  it("wrong credentials are an auth error", async () => {
    process.env.DLQ_TEST_BAD_USER = "nobody";
    const a = new RabbitMqAdapter(testConfig({ usernameEnv: "DLQ_TEST_BAD_USER", passwordEnv: "DLQ_TEST_BAD_USER" }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    try {
      await expect(a.ping()).rejects.toMatchObject({ kind: "auth", code: "forbidden:broker" });
    } finally {
      await a.close();
    }
  });

  it("a DLQ deleted after listing is not_found, and the adapter keeps working", async () => {
    const { dlq } = await kit.dlqByReject([{ body: text("gone") }]);
    expect((await adapter.describeDlq(dlq)).depth).toBe(1);
    await (await kit.channel()).deleteQueue(dlq);
    await expect(adapter.browse(dlq, { offset: 0, limit: 5 })).rejects.toMatchObject({ kind: "not_found" });
    await adapter.ping();
  });
});

describe("rabbitmq: a read that stops early says so, and a slow one does not", () => {
  const n = 100;
  /** 64 KB letters: 6.4 MB in all, more than the sockets buffer, so a freeze stops deliveries. */
  async function bigLetters(label: string) {
    const dlq = await kit.queue(kit.name(label));
    for (let i = 0; i < n; i++) await kit.publish(dlq, { body: text(`${label}-${i}`.padEnd(64 * 1024, ".")) });
    await kit.waitDepth(dlq, n);
    return dlq;
  }

  /**
   * Reads the DLQ through a proxy that stops passing the broker's answers after 10 letters were read
   * and lets them through again after `frozenMs` (so the channel's close in the stream's finally is
   * answered).
   */
  /** By default as a page's read waits for the broker's answer (ANSWER_MS); `{}`: the adapter's own default. */
  async function readThroughFreeze(
    dlq: string,
    frozenMs: number,
    answer: { streamAnswerMs?: number } = { streamAnswerMs: ANSWER_MS },
  ) {
    const proxy = new CuttableProxy(Number(new URL(AMQP_URL).port || 5672));
    await proxy.start();
    const frozen = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq }], url: testAmqpUrlVia(proxy.port) }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 300,
      ...answer,
    });
    const shortfalls: Array<{ reason: string; unread: number | null }> = [];
    let read = 0;
    try {
      for await (const l of frozen.stream(dlq, { onShortfall: (s) => shortfalls.push(s) })) {
        if (++read === 10) {
          proxy.freeze();
          setTimeout(() => proxy.thaw(), frozenMs);
        }
        expect(l.id).toBeTruthy();
      }
    } finally {
      await frozen.close().catch(() => undefined);
      await proxy.cut();
    }
    return { read, shortfalls };
  }

  it("a whole read reports nothing; a broker that stops answering mid-read: the stream ends and reports the letters it did not read", async () => {
    const dlq = await bigLetters("idle");
    const whole: unknown[] = [];
    let all = 0;
    const direct = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq }] }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 2000,
    });
    try {
      for await (const l of direct.stream(dlq, { onShortfall: (s) => whole.push(s) })) if (l) all++;
    } finally {
      await direct.close();
    }
    expect(all).toBe(n);
    expect(whole).toEqual([]);

    // Frozen longer than the reader waits for the broker to say what it still holds.
    const { read, shortfalls } = await readThroughFreeze(dlq, ANSWER_MS + 1500);
    expect(read).toBeGreaterThanOrEqual(10);
    expect(read).toBeLessThan(n);
    expect(shortfalls).toHaveLength(1);
    expect(shortfalls[0].unread).toBe(n - read);
    expect(shortfalls[0].reason).toContain(
      `delivered nothing for 300 ms after ${read} of the ${n} letters counted at the start, and did not say within 5 s`,
    );

    // A background read waits longer for the answer (a deep queue loading from disk takes more
    // than 5 s to give it): the same freeze, with the adapter's default, reads every letter.
    const patient = await readThroughFreeze(dlq, ANSWER_MS + 1500, {});
    expect(patient.read).toBe(n);
    expect(patient.shortfalls).toEqual([]);
  }, 90_000);

  it("a broker that pauses for longer than the idle time, then answers: every letter is read and none is reported unread", async () => {
    const dlq = await bigLetters("pause");
    const { read, shortfalls } = await readThroughFreeze(dlq, 1500);
    expect(shortfalls).toEqual([]);
    expect(read).toBe(n);
  }, 60_000);

  it("letters taken from the queue mid-read (a purge): the read stops at once and says none were left ready", async () => {
    const dlq = await bigLetters("purged");
    // Small windows (4 letters of 64 KB per 256 KB), so most letters are still ready in the queue.
    const adapter = new RabbitMqAdapter(testConfig({ dlqs: [{ name: dlq }] }), {
      allManagedHeaders: MANAGED_HEADERS,
      idleMs: 300,
      readBufferBytes: 256 * 1024,
    });
    const shortfalls: Array<{ reason: string; unread: number | null }> = [];
    let read = 0;
    try {
      for await (const l of adapter.stream(dlq, { onShortfall: (s) => shortfalls.push(s) })) {
        expect(l.id).toBeTruthy();
        if (++read === 10) await (await kit.channel()).purgeQueue(dlq);
      }
    } finally {
      await adapter.close();
    }
    expect(read).toBeGreaterThanOrEqual(10);
    expect(read).toBeLessThan(n);
    expect(shortfalls).toHaveLength(1);
    expect(shortfalls[0].unread).toBe(n - read);
    expect(shortfalls[0].reason).toContain(
      `after ${read} of the ${n} letters counted at the start, and held none ready`,
    );
  }, 60_000);
});
