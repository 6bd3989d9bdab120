/**
 * `inspect` against the machine's RabbitMQ 3.10: vitals after real dead-lettering, each finding
 * produced by a broker object set up with the fault and gone once the fault is fixed, and a
 * request count that does not grow with the number of queues. The management API's statistics
 * (messages, consumers) lag by up to a stats interval (5 s), so checks that read them poll.
 */
import amqp from "amqplib";
import { afterAll, describe, expect, it } from "vitest";
import type { BrokerInspection, ConfigFinding } from "@/lib/brokers/contract/inspection";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, RabbitKit, mgmtRequest, TEST_VHOST, testConfig, VHOST } from "@/lib/brokers/rabbitmq/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const kit = new RabbitKit();
const adapter = new RabbitMqAdapter(testConfig(), { allManagedHeaders: MANAGED_HEADERS, idleMs: 500 });
const opts = { minRetentionMs: 0 };
const closers: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await adapter.close();
  await kit.cleanup();
});

const objectOf = (queue: string) => `queue ${queue} (vhost ${TEST_VHOST})`;
const findingOf = (r: BrokerInspection, code: string, queue: string): ConfigFinding | undefined =>
  r.findings.find((f) => f.code === code && f.object === objectOf(queue));

async function until<T>(f: () => Promise<T>, ok: (t: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const t = await f();
    if (ok(t)) return t;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function mgmtQueue(
  name: string,
): Promise<{ consumers?: number; messages?: number; message_stats?: { publish?: number; deliver?: number } }> {
  return (await mgmtRequest("GET", `api/queues/${VHOST}/${encodeURIComponent(name)}`)).json();
}

/** A consumer on its own connection, as an application's would be; closed in afterAll. */
async function consume(queue: string): Promise<void> {
  const conn = await amqp.connect(AMQP_URL);
  conn.on("error", () => undefined);
  const ch = await conn.createChannel();
  ch.on("error", () => undefined);
  await ch.consume(queue, () => undefined, { noAck: false });
  closers.push(() => conn.close());
}

async function redeclare(name: string, args: Record<string, unknown>) {
  const ch = await kit.channel();
  await ch.deleteQueue(name);
  await kit.queue(name, args);
}

/** A policy on exactly this queue (its pattern anchored), removed by kit.cleanup. */
async function setPolicy(policy: string, queue: string, definition: Record<string, unknown>) {
  kit.policies.add(policy);
  const pattern = `^${queue.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
  const res = await mgmtRequest("PUT", `api/policies/${VHOST}/${encodeURIComponent(policy)}`, {
    pattern,
    definition,
    "apply-to": "queues",
    priority: 900,
  });
  expect(res.status).toBeLessThan(300);
}

describe("rabbitmq inspect: vitals", () => {
  it("after dead-lettering N letters: depth N, no counter (RabbitMQ does not count dead-lettered letters), head timestamp on classic queues, retention from the TTL argument", async () => {
    const n = 5;
    const stamped = Math.floor(Date.now() / 1000) - 3600;
    const dlq = await kit.queue(kit.name("vit-dlq"), { "x-message-ttl": 3_600_000 });
    const source = await kit.queue(kit.name("vit-work"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
    });
    const qdlq = await kit.queue(kit.name("vit-qdlq"), { "x-queue-type": "quorum" });
    const qsource = await kit.queue(kit.name("vit-qwork"), {
      "x-queue-type": "quorum",
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": qdlq,
    });
    for (let i = 0; i < n; i++) {
      await kit.publish(source, { body: new TextEncoder().encode(`c${i}`), props: { timestamp: stamped + i } });
      await kit.publish(qsource, { body: new TextEncoder().encode(`q${i}`), props: { timestamp: stamped + i } });
    }
    await kit.rejectAll(source, n);
    await kit.rejectAll(qsource, n);
    await kit.waitDepth(dlq, n);
    await kit.waitDepth(qdlq, n);

    // What the broker counts: the source's publish counter has the N letters once its statistics
    // are out; one letter published to the DLQ by a channel shows in the DLQ's counter, the N
    // letters dead-lettered into it never do. Hence enteredTotal null.
    await kit.publish(dlq, {
      body: new TextEncoder().encode("published directly"),
      props: { timestamp: stamped + 100 },
    });
    await until(
      () => mgmtQueue(source),
      (q) => q.message_stats?.publish === n && q.message_stats?.deliver === n,
      "the source's statistics",
    );
    const dlqStats = await until(
      () => mgmtQueue(dlq),
      (q) => (q.message_stats?.publish ?? 0) > 0 && q.messages === n + 1,
      "the DLQ's statistics",
    );
    expect(dlqStats.message_stats?.publish).toBe(1);

    // The depth and the head's timestamp do not always arrive in the same management answer.
    const r = await until(
      () => adapter.inspect(opts),
      (x) =>
        x.dlqs.find((d) => d.name === dlq)?.depth === n + 1 &&
        x.dlqs.find((d) => d.name === dlq)?.oldestAt != null &&
        x.dlqs.find((d) => d.name === qdlq)?.depth === n,
      "depths and the head's timestamp in the listing",
    );
    expect(r.dlqs.find((d) => d.name === dlq)).toEqual({
      name: dlq,
      queueType: "classic",
      depth: n + 1,
      inFlight: 0,
      enteredTotal: null,
      oldestAt: new Date(stamped * 1000).toISOString(),
      retentionMs: 3_600_000,
      retentionClock: "arrival",
    });
    // Quorum queues have no head_message_timestamp on 3.10.
    expect(r.dlqs.find((d) => d.name === qdlq)).toEqual({
      name: qdlq,
      queueType: "quorum",
      depth: n,
      inFlight: 0,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });

    // The same DLQs as listDlqs (only this test's queues: other tests share the vhost).
    const mine = (names: string[]) => names.filter((x) => x.startsWith(kit.prefix)).sort();
    const listed = await adapter.listDlqs();
    expect(mine(r.dlqs.map((d) => d.name))).toEqual(mine(listed.map((d) => d.name)));
    expect(mine(r.dlqs.map((d) => d.name))).toEqual(expect.arrayContaining([dlq, qdlq]));
  });

  it("a constant number of requests: 20 more queues, 10 of them DLQs, cost nothing more", async () => {
    const before = await adapter.inspect(opts);
    const added: string[] = [];
    for (let i = 0; i < 10; i++) {
      const dlq = await kit.queue(kit.name("many-dlq"));
      await kit.queue(kit.name("many-work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
      added.push(dlq);
    }
    const after = await adapter.inspect(opts);
    expect(before.calls).toBe(5);
    expect(after.calls).toBe(before.calls);
    expect(after.dlqs.map((d) => d.name)).toEqual(expect.arrayContaining(added));
  });
});

describe("rabbitmq inspect: findings appear with the fault and go with the fix", () => {
  it("rabbitmq.no_dead_letter_exchange: a queue with consumers and no dead-letter exchange", async () => {
    const dlq = await kit.queue(kit.name("nodlx-dlq"));
    const work = await kit.queue(kit.name("nodlx-work"));
    await consume(work);
    const r = await until(
      () => adapter.inspect(opts),
      (x) => findingOf(x, "rabbitmq.no_dead_letter_exchange", work) !== undefined,
      "the finding",
    );
    expect(findingOf(r, "rabbitmq.no_dead_letter_exchange", work)).toMatchObject({ severity: "warning", dlq: null });

    await redeclare(work, { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    await consume(work);
    // The fix must be seen with the consumer attached, or the finding would go for the wrong reason.
    await until(
      () => mgmtQueue(work),
      (q) => q.consumers === 1,
      "the new consumer in the statistics",
    );
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(work))).toEqual([]);
  });

  it("rabbitmq.dlx_missing: the dead-letter exchange does not exist", async () => {
    const dlx = kit.name("missing-dlx");
    const dlq = await kit.queue(kit.name("missing-dlq"));
    const work = await kit.queue(kit.name("missing-work"), {
      "x-dead-letter-exchange": dlx,
      "x-dead-letter-routing-key": "orders",
    });
    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.dlx_missing", work)).toMatchObject({ severity: "critical", dlq: null });
    expect(findingOf(r, "rabbitmq.dlx_missing", work)?.why).toContain(dlx);

    await kit.exchange(dlx, "direct");
    await (await kit.channel()).bindQueue(dlq, dlx, "orders");
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(work))).toEqual([]);
    // The DLQ is now found through the exchange.
    expect(fixed.dlqs.map((d) => d.name)).toContain(dlq);
  });

  it("rabbitmq.dlx_unroutable: the dead-letter exchange has no binding for the letters' routing keys", async () => {
    const ch = await kit.channel();
    const dlx = await kit.exchange(kit.name("unroutable-dlx"), "direct");
    const dlq = await kit.queue(kit.name("unroutable-dlq"));
    await ch.bindQueue(dlq, dlx, "payments");
    // With a dead-letter routing key.
    const work = await kit.queue(kit.name("unroutable-work"), {
      "x-dead-letter-exchange": dlx,
      "x-dead-letter-routing-key": "orders",
    });
    // Without one: the keys it is bound with (a topic DLX whose pattern does not match them).
    const src = await kit.exchange(kit.name("unroutable-src"), "direct");
    const tdlx = await kit.exchange(kit.name("unroutable-tdlx"), "topic");
    const tdlq = await kit.queue(kit.name("unroutable-tdlq"));
    await ch.bindQueue(tdlq, tdlx, "billing.#");
    const bound = await kit.queue(kit.name("unroutable-bound"), { "x-dead-letter-exchange": tdlx });
    await ch.bindQueue(bound, src, "orders.created");

    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.dlx_unroutable", work)).toMatchObject({ severity: "critical", dlq: null });
    expect(findingOf(r, "rabbitmq.dlx_unroutable", work)?.why).toMatch(/routing key "orders"/);
    expect(findingOf(r, "rabbitmq.dlx_unroutable", bound)).toMatchObject({ severity: "critical" });
    expect(findingOf(r, "rabbitmq.dlx_unroutable", bound)?.why).toMatch(/routing key "orders\.created"/);

    await ch.bindQueue(dlq, dlx, "orders");
    await ch.bindQueue(tdlq, tdlx, "orders.*");
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(work) || f.object === objectOf(bound))).toEqual([]);
  });

  it("rabbitmq.delivery_limit_without_dlx: a quorum queue with a delivery limit (argument, then policy) and no dead-letter exchange", async () => {
    const dlq = await kit.queue(kit.name("limit-dlq"));
    const work = await kit.queue(kit.name("limit-work"), { "x-queue-type": "quorum", "x-delivery-limit": 3 });
    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.delivery_limit_without_dlx", work)).toMatchObject({
      severity: "critical",
      dlq: null,
    });
    expect(findingOf(r, "rabbitmq.delivery_limit_without_dlx", work)?.why).toMatch(/delivery limit of 3 /);

    await redeclare(work, {
      "x-queue-type": "quorum",
      "x-delivery-limit": 3,
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
      "x-dead-letter-strategy": "at-least-once",
      "x-overflow": "reject-publish",
    });
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(work))).toEqual([]);

    // 3.10 sets no default limit: a quorum queue without one is no finding until a policy gives it one.
    const viaPolicy = await kit.queue(kit.name("limit-policy"), { "x-queue-type": "quorum" });
    expect(findingOf(await adapter.inspect(opts), "rabbitmq.delivery_limit_without_dlx", viaPolicy)).toBeUndefined();
    const policy = `${kit.prefix}-limit`;
    await setPolicy(policy, viaPolicy, { "delivery-limit": 4 });
    const withPolicy = await until(
      () => adapter.inspect(opts),
      (x) => findingOf(x, "rabbitmq.delivery_limit_without_dlx", viaPolicy) !== undefined,
      "the policy's finding",
    );
    expect(findingOf(withPolicy, "rabbitmq.delivery_limit_without_dlx", viaPolicy)?.why).toMatch(
      /delivery limit of 4 /,
    );
    await setPolicy(policy, viaPolicy, {
      "delivery-limit": 4,
      "dead-letter-exchange": "",
      "dead-letter-routing-key": dlq,
      "dead-letter-strategy": "at-least-once",
      overflow: "reject-publish",
    });
    const policyFixed = await until(
      () => adapter.inspect(opts),
      (x) => findingOf(x, "rabbitmq.delivery_limit_without_dlx", viaPolicy) === undefined,
      "the fixed policy",
    );
    expect(policyFixed.findings.filter((f) => f.object === objectOf(viaPolicy))).toEqual([]);
  });

  it("rabbitmq.dead_letter_at_most_once: a quorum queue dead-lettering at-most-once, fixed by a policy", async () => {
    const dlq = await kit.queue(kit.name("amo-dlq"));
    const work = await kit.queue(kit.name("amo-work"), {
      "x-queue-type": "quorum",
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
      "x-dead-letter-strategy": "at-least-once",
    });
    const r = await adapter.inspect(opts);
    // at-least-once asked, but the overflow is drop-head: RabbitMQ falls back to at-most-once.
    expect(findingOf(r, "rabbitmq.dead_letter_at_most_once", work)).toMatchObject({ severity: "warning", dlq });
    expect(findingOf(r, "rabbitmq.dead_letter_at_most_once", work)?.why).toMatch(/falls back/);

    await setPolicy(`${kit.prefix}-alo`, work, { overflow: "reject-publish" });
    const fixed = await until(
      () => adapter.inspect(opts),
      (x) => findingOf(x, "rabbitmq.dead_letter_at_most_once", work) === undefined,
      "the policy to apply",
    );
    expect(fixed.findings.filter((f) => f.object === objectOf(work))).toEqual([]);
  });

  it("rabbitmq.dlq_message_ttl: a DLQ with a TTL, critical without a DLX of its own, warning with one", async () => {
    const dlq = await kit.queue(kit.name("ttl-dlq"), { "x-message-ttl": 60_000 });
    await kit.queue(kit.name("ttl-work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const parking = await kit.queue(kit.name("ttl-parking"));
    const chained = await kit.queue(kit.name("ttl-chained"), {
      "x-message-ttl": 60_000,
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": parking,
    });
    await kit.queue(kit.name("ttl-work2"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": chained });
    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.dlq_message_ttl", dlq)).toMatchObject({ severity: "critical", dlq });
    expect(findingOf(r, "rabbitmq.dlq_message_ttl", chained)).toMatchObject({ severity: "warning", dlq: chained });

    await redeclare(dlq, {});
    await redeclare(chained, { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": parking });
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(dlq) || f.object === objectOf(chained))).toEqual([]);
  });

  it("rabbitmq.dlq_max_length: a DLQ with max-length or max-length-bytes", async () => {
    const dlq = await kit.queue(kit.name("len-dlq"), { "x-max-length": 100 });
    const bytes = await kit.queue(kit.name("len-bytes-dlq"), { "x-max-length-bytes": 1_048_576 });
    await kit.queue(kit.name("len-work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    await kit.queue(kit.name("len-work2"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": bytes });
    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.dlq_max_length", dlq)).toMatchObject({ severity: "warning", dlq });
    expect(findingOf(r, "rabbitmq.dlq_max_length", bytes)).toMatchObject({ severity: "warning", dlq: bytes });

    await redeclare(dlq, {});
    await redeclare(bytes, {});
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(dlq) || f.object === objectOf(bytes))).toEqual([]);
  });

  it("rabbitmq.dlq_expires: a DLQ that deletes itself when unused", async () => {
    const dlq = await kit.queue(kit.name("exp-dlq"), { "x-expires": 3_600_000 });
    await kit.queue(kit.name("exp-work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const r = await adapter.inspect(opts);
    expect(findingOf(r, "rabbitmq.dlq_expires", dlq)).toMatchObject({ severity: "critical", dlq });

    await redeclare(dlq, {});
    const fixed = await adapter.inspect(opts);
    expect(fixed.findings.filter((f) => f.object === objectOf(dlq))).toEqual([]);
  });
});

describe("rabbitmq inspect: without or with a broken management API", () => {
  it("without one: configured DLQs' depths over AMQP and one info finding", async () => {
    const dlq = await kit.queue(kit.name("nomgmt-dlq"));
    await kit.publish(dlq, { body: new TextEncoder().encode("x") });
    const missing = kit.name("nomgmt-missing");
    const a = new RabbitMqAdapter(
      testConfig({ management: undefined, dlqs: [{ name: dlq }, { name: missing, queueType: "quorum" }] }),
      { allManagedHeaders: MANAGED_HEADERS },
    );
    try {
      const r = await a.inspect(opts);
      expect(r.dlqs).toEqual([
        {
          name: dlq,
          queueType: "unknown",
          depth: 1,
          inFlight: null,
          enteredTotal: null,
          oldestAt: null,
          retentionMs: null,
          retentionClock: "arrival",
        },
        {
          name: missing,
          queueType: "quorum",
          depth: null,
          inFlight: null,
          enteredTotal: null,
          oldestAt: null,
          retentionMs: null,
          retentionClock: "arrival",
        },
      ]);
      expect(r.findings.map((f) => [f.code, f.severity, f.object])).toEqual([
        ["rabbitmq.management_unconfigured", "info", `vhost ${TEST_VHOST}`],
      ]);
      expect(r.calls).toBeGreaterThan(0);
    } finally {
      await a.close();
    }
  });

  it("a management API that does not answer is unavailable:broker", async () => {
    const a = new RabbitMqAdapter(testConfig({ management: { url: "http://127.0.0.1:1" } }), {
      allManagedHeaders: MANAGED_HEADERS,
    });
    try {
      const e = await a.inspect(opts).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(BrokerError);
      expect((e as BrokerError).code).toBe("unavailable:broker");
    } finally {
      await a.close();
    }
  });
});
