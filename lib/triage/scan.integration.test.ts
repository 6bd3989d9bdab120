import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { queryAudit } from "@/lib/audit";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig as kafkaConfig } from "@/lib/brokers/kafka/test-kit";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { AMQP_URL, RabbitKit, testConfig as rabbitConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { SqsAdapter } from "@/lib/brokers/sqs/adapter";
import { ELASTICMQ_ENDPOINT, SqsKit, testConfig as sqsConfig } from "@/lib/brokers/sqs/test-kit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { sha256Hex } from "@/lib/brokers/display";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import type { JobHandler } from "@/lib/jobs/types";
import { JobWorker } from "@/lib/jobs/worker";
import { countLetters, queryGroups, queryGroupsBy, queryLetters, streamLetters } from "./queries";
import { loadRules } from "./rules-store";
import { scanHandler, type ScanDeps } from "./scan";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * Scans DLQs filled by real dead-lettering on each broker into the index, and checks groups,
 * reconciliation on rescan, resume after a dead worker, cancel and payload decryption.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** Runs one scan job of `queue` to its end with a worker that only knows this test's job kind. */
async function scan(
  adapter: BrokerAdapter,
  queue: string,
  opts: {
    deps?: Partial<ScanDeps>;
    wrap?: (h: JobHandler, jobId: string) => JobHandler;
    prepare?: (jobId: string, kind: string) => Promise<void>;
  } = {},
) {
  const kind = `scan-test-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: adapter.connectionId,
    queue,
    params: { acceptRisk: true },
  });
  await opts.prepare?.(job.id, kind);
  let handler = scanHandler({ adapterFor: () => adapter, ...opts.deps });
  if (opts.wrap) handler = opts.wrap(handler, job.id);
  const worker = new JobWorker({ handlers: { [kind]: handler }, owner: `test-${kind}`, leaseMs: 10_000 });
  const ran = await worker.runOnce();
  expect(ran?.id).toBe(job.id);
  return (await jobStore().get(job.id))!;
}

async function groupCounts(connectionId: string, queue: string) {
  const { groups } = await queryGroups(connectionId, queue, (await loadRules()).rules);
  return groups;
}

async function rowCount(connectionId: string, queue: string) {
  const r = await getDb().$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
    connectionId,
    queue,
  );
  return r[0].n;
}

describe("triage scan on RabbitMQ", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(rabbitConfig({ id: `tri-rmq-${randomUUID().slice(0, 6)}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    idleMs: 500,
  });
  cleanups.push(
    () => kit.cleanup(),
    () => adapter.close(),
  );

  const seed = () => [
    ...Array.from({ length: 6 }, (_, i) => ({
      body: enc(`{"order":${1000 + i}}`),
      messageId: `timeout-${i}`,
      headers: {
        "x-exception-class": "java.net.SocketTimeoutException",
        "x-exception-message": `Read timed out after ${3000 + i} ms calling order ${1000 + i}`,
        "x-app-version": "orders-2.3.1",
      },
    })),
    ...Array.from({ length: 4 }, (_, i) => ({
      body: enc(`{"email":"bad-${i}"}`),
      messageId: `invalid-${i}`,
      headers: {
        "x-exception-class": "com.acme.ValidationException",
        "x-exception-message": `Field 'email' is invalid for customer ${randomUUID()}`,
      },
    })),
    ...Array.from({ length: 2 }, (_, i) => ({ body: enc(`plain ${i}`), messageId: `plain-${i}` })),
  ];

  it("indexes every letter, groups by exception with ids normalised away, and labels groups", async () => {
    const { dlq, source } = await kit.dlqByReject(seed());
    const job = await scan(adapter, dlq, { deps: { batchSize: 5 } });
    expect(job.state).toBe("succeeded");
    expect(job.progress).toMatchObject({ read: 12, total: 12, gone: 0 });
    const groups = await groupCounts(adapter.connectionId, dlq);
    expect(groups.map((g) => g.count)).toEqual([6, 4, 2]);
    const [timeouts, invalid, plain] = groups;
    expect(timeouts.exceptionClass).toBe("java.net.SocketTimeoutException");
    expect(timeouts.disposition).toBe("transient");
    expect(timeouts.versions).toEqual(["orders-2.3.1"]);
    expect(timeouts.origins).toEqual([source]);
    expect(timeouts.sampleLetterIds).toHaveLength(3);
    expect(timeouts.share).toBeCloseTo(0.5);
    expect(timeouts.buckets.reduce((n, b) => n + b.count, 0)).toBe(6);
    expect(invalid.disposition).toBe("permanent");
    expect(plain.basis).toBe("reason");
    expect(plain.reason).toMatch(/rejected/);

    const byReason = await queryGroupsBy(adapter.connectionId, dlq, "reason");
    expect(byReason.groups).toEqual([expect.objectContaining({ value: "rejected", count: 12 })]);
    const byVersion = await queryGroupsBy(adapter.connectionId, dlq, "header:x-app-version");
    expect(byVersion.groups.map((g) => [g.value, g.count])).toEqual([
      ["orders-2.3.1", 6],
      [null, 6],
    ]);

    // Filters and keyset paging.
    const f = { connectionId: adapter.connectionId, queue: dlq, groupKey: invalid.groupKey };
    expect(await countLetters(f)).toBe(4);
    const p1 = await queryLetters(f, { limit: 3 });
    const p2 = await queryLetters(f, { limit: 3, after: p1.nextCursor });
    expect(p1.rows).toHaveLength(3);
    expect(p2.rows).toHaveLength(1);
    expect(p2.nextCursor).toBeNull();
    expect(new Set([...p1.rows, ...p2.rows].map((r) => r.messageId))).toEqual(
      new Set(["invalid-0", "invalid-1", "invalid-2", "invalid-3"]),
    );
    expect(
      await countLetters({
        connectionId: adapter.connectionId,
        queue: dlq,
        header: { name: "x-app-version", value: "orders-2.3.1" },
        search: { kind: "raw" },
      }),
    ).toBe(6);
    expect(
      await countLetters({
        connectionId: adapter.connectionId,
        queue: dlq,
        text: "read timed out",
        search: { kind: "raw" },
      }),
    ).toBe(6);
    expect(
      await countLetters({
        connectionId: adapter.connectionId,
        queue: dlq,
        exceptionClass: "com.acme.ValidationException",
      }),
    ).toBe(4);

    // Payloads come back exactly, decrypted, only through the export stream.
    const exported = [];
    for await (const r of streamLetters(
      { connectionId: adapter.connectionId, queue: dlq, groupKey: timeouts.groupKey },
      { withPayload: true, batchSize: 4 },
    ))
      exported.push(r);
    expect(exported).toHaveLength(6);
    for (const r of exported) expect(r.payloadText).toBe(`{"order":${1000 + Number(r.messageId!.split("-")[1])}}`);

    // The scan's end is in the audit log under the job id.
    const { rows } = await queryAudit({ action: "triage.scan_finished", queue: dlq }, { limit: 5 });
    expect(rows[0]).toMatchObject({ operationId: job.id, outcome: "success" });
    expect(rows[0].details).toMatchObject({ state: "succeeded", read: 12 });
  });

  it("rescan after letters were removed marks exactly those gone and duplicates nothing", async () => {
    const { dlq } = await kit.dlqByReject(seed());
    expect((await scan(adapter, dlq)).state).toBe("succeeded");
    // Consume and ack the first three letters (timeout-0..2).
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createChannel();
    const removed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await ch.get(dlq, { noAck: false });
      if (!m) throw new Error("DLQ empty");
      removed.push(m.properties.messageId as string);
      ch.ack(m);
    }
    await ch.close();
    await conn.close();
    await kit.waitDepth(dlq, 9);

    const second = await scan(adapter, dlq);
    expect(second.progress).toMatchObject({ read: 9, gone: 3 });
    expect(await rowCount(adapter.connectionId, dlq)).toBe(12);
    const gone = await queryLetters(
      { connectionId: adapter.connectionId, queue: dlq, includeGone: true },
      { limit: 100 },
    );
    expect(
      gone.rows
        .filter((r) => r.goneAt)
        .map((r) => r.messageId)
        .sort(),
    ).toEqual(removed.sort());
    expect((await groupCounts(adapter.connectionId, dlq)).map((g) => g.count)).toEqual([4, 3, 2]);
    // A third scan changes nothing.
    expect((await scan(adapter, dlq)).progress).toMatchObject({ read: 9, gone: 0 });
    expect(await rowCount(adapter.connectionId, dlq)).toBe(12);
  });

  it("a job whose worker died is resumed by another worker under the same scan id", async () => {
    const { dlq } = await kit.dlqByReject(seed());
    const deadScanId = randomUUID();
    const job = await scan(adapter, dlq, {
      prepare: async (jobId, kind) => {
        // A worker claims it, writes a checkpoint, then "dies": its lease expires.
        await jobStore().claim("dead-worker", [kind], 10_000);
        await jobStore().heartbeat(jobId, "dead-worker", 10_000, {
          checkpoint: { scanId: deadScanId, runs: 1, written: 5 },
        });
        await getDb().$executeRawUnsafe(
          `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
          jobId,
        );
      },
    });
    expect(job.state).toBe("succeeded");
    expect(job.attempts).toBe(2);
    expect(job.progress).toMatchObject({ read: 12, run: 2, scanId: deadScanId });
    const ids = await getDb().$queryRawUnsafe<Array<{ scan_id: string }>>(
      `SELECT DISTINCT scan_id::text FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
      adapter.connectionId,
      dlq,
    );
    expect(ids).toEqual([{ scan_id: deadScanId }]);
  });

  it("cancel stops the scan between batches, without marking anything gone", async () => {
    // Enough letters that the scan cannot have read them all before it sees the cancel: at most a
    // few batches are in flight at once.
    const n = 60;
    const { dlq } = await kit.dlqByReject(
      Array.from({ length: n }, (_, i) => ({ body: enc(`{"n":${i}}`), messageId: `c-${i}` })),
    );
    let checkpoints = 0;
    const job = await scan(adapter, dlq, {
      deps: { batchSize: 2 },
      wrap: (h, jobId) => (ctx) =>
        h({
          ...ctx,
          checkpoint: async (u) => {
            // The first checkpoint is the start; the second comes after the first batch is written.
            if (++checkpoints === 2) await jobStore().requestCancel(jobId);
            return ctx.checkpoint(u);
          },
        }),
    });
    expect(job.state).toBe("cancelled");
    const read = (job.progress as { written: number }).written;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(n);
    expect(await rowCount(adapter.connectionId, dlq)).toBe(read);
    expect(await countLetters({ connectionId: adapter.connectionId, queue: dlq, includeGone: true })).toBe(read);
    await kit.waitDepth(dlq, n); // every letter went back to the DLQ
  });
});

describe("triage scan on SQS (ElasticMQ)", () => {
  const kit = new SqsKit(ELASTICMQ_ENDPOINT);
  const adapter = new SqsAdapter(
    sqsConfig(ELASTICMQ_ENDPOINT, { id: `tri-sqs-${randomUUID().slice(0, 6)}`, queueNamePrefix: kit.prefix }),
    { allManagedHeaders: MANAGED_HEADERS },
  );
  cleanups.push(
    () => kit.cleanup(),
    () => adapter.close(),
  );

  it("groups by exception attributes; rescan after deletes marks those gone", async () => {
    const letters = [
      ...Array.from({ length: 5 }, (_, i) => ({
        body: enc(`{"n":${i}}`),
        headers: {
          exceptionClass: "System.TimeoutException",
          exceptionMessage: `The operation timed out after ${100 + i} ms (request ${randomUUID()})`,
        },
      })),
      ...Array.from({ length: 3 }, (_, i) => ({
        body: enc(`{"m":${i}}`),
        headers: {
          exceptionClass: "System.Runtime.Serialization.SerializationException",
          exceptionMessage: `Could not deserialize order ${randomUUID()} at byte ${i * 7}`,
        },
      })),
    ];
    const { dlq, dlqUrl, source } = await kit.dlqByRedrive(letters);
    const first = await scan(adapter, dlq);
    expect(first.state).toBe("succeeded");
    expect(first.progress).toMatchObject({ read: 8 });
    const groups = await groupCounts(adapter.connectionId, dlq);
    expect(groups.map((g) => [g.exceptionClass, g.count])).toEqual([
      ["System.TimeoutException", 5],
      ["System.Runtime.Serialization.SerializationException", 3],
    ]);
    expect(groups[0].origins).toEqual([source]);
    expect(groups[0].disposition).toBe("transient");
    expect(groups[1].disposition).toBe("permanent");

    const got = await kit.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 2, VisibilityTimeout: 60 }),
    );
    const removed = (got.Messages ?? []).map((m) => m.MessageId!);
    expect(removed.length).toBeGreaterThan(0);
    for (const m of got.Messages ?? [])
      await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle }));
    const second = await scan(adapter, dlq);
    expect(second.progress).toMatchObject({ read: 8 - removed.length, gone: removed.length });
    const all = await queryLetters(
      { connectionId: adapter.connectionId, queue: dlq, includeGone: true },
      { limit: 100 },
    );
    expect(all.rows).toHaveLength(8);
    expect(
      all.rows
        .filter((r) => r.goneAt)
        .map((r) => r.messageId)
        .sort(),
    ).toEqual(removed.sort());
    expect(second.progress).not.toHaveProperty("partial");
  });

  it("letters another reader holds are not marked gone: the rescan says it is partial; once released, a rescan reconciles", async () => {
    const { dlq, dlqUrl } = await kit.dlqByRedrive(Array.from({ length: 5 }, (_, i) => ({ body: enc(`held-${i}`) })));
    expect((await scan(adapter, dlq)).progress).toMatchObject({ read: 5, gone: 0 });

    // A consumer holds two letters (in flight, invisible to the scan) while it runs.
    const held =
      (
        await kit.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 2, VisibilityTimeout: 60 }),
        )
      ).Messages ?? [];
    expect(held).toHaveLength(2);
    const during = await scan(adapter, dlq);
    expect(during.state).toBe("succeeded");
    expect(during.progress).toMatchObject({ read: 3, gone: 0, partial: { unread: 2 } });
    expect((during.progress as { partial: { reason: string } }).partial.reason).toMatch(
      /2 letters were in flight, held by another reader/,
    );
    const rows = await queryLetters(
      { connectionId: adapter.connectionId, queue: dlq, includeGone: true },
      { limit: 100 },
    );
    expect(rows.rows).toHaveLength(5);
    expect(rows.rows.filter((r) => r.goneAt)).toHaveLength(0);
    const { rows: audit } = await queryAudit({ action: "triage.scan_finished", queue: dlq }, { limit: 5 });
    expect(audit[0].details).toMatchObject({ gone: 0, partial: { unread: 2 } });

    // The consumer deletes one and gives the other back: the next scan is whole and marks one gone.
    await kit.sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: held[0].ReceiptHandle }));
    await kit.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: dlqUrl,
        ReceiptHandle: held[1].ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const after = await scan(adapter, dlq);
    expect(after.progress).toMatchObject({ read: 4, gone: 1 });
    expect(after.progress).not.toHaveProperty("partial");
    const gone = (
      await queryLetters({ connectionId: adapter.connectionId, queue: dlq, includeGone: true }, { limit: 100 })
    ).rows.filter((r) => r.goneAt);
    expect(gone.map((r) => r.messageId)).toEqual([held[0].MessageId]);
  });

  it("FIFO: a group's letters past the first ten cannot be read without removing letters; the scan says so and marks nothing gone", async () => {
    const letters = [
      ...Array.from({ length: 25 }, (_, i) => ({ body: enc(`big-${i}`), groupId: "big" })),
      ...Array.from({ length: 2 }, (_, i) => ({ body: enc(`small-${i}`), groupId: "small" })),
    ];
    const { dlq } = await kit.dlqByRedrive(letters, { fifo: true });
    const first = await scan(adapter, dlq);
    expect(first.state).toBe("succeeded");
    // SQS hands out later letters of a group only with (or after deleting) its earlier ones: one
    // call's worth (10) is all a reader that removes nothing can see.
    const progress = first.progress as { read: number; partial: { reason: string } };
    const read = progress.read;
    expect(read).toBeGreaterThanOrEqual(10);
    expect(read).toBeLessThan(27);
    expect(first.progress).toMatchObject({ gone: 0, partial: { unread: 27 - read } });
    expect(progress.partial.reason).toMatch(/FIFO group/);
    // What was read is the head of each group, in order.
    const indexed = new Set(
      (await queryLetters({ connectionId: adapter.connectionId, queue: dlq }, { limit: 100 })).rows.map(
        (r) => r.sha256,
      ),
    );
    expect(indexed.size).toBe(read);
    for (const [group, n] of [
      ["big", 25],
      ["small", 2],
    ] as const) {
      const has = Array.from({ length: n }, (_, i) => indexed.has(sha256Hex(enc(`${group}-${i}`))));
      expect(has.indexOf(false) === -1 ? n : has.indexOf(false), `${group}: read letters form the group's head`).toBe(
        has.filter(Boolean).length,
      );
    }
  }, 60_000);
});

describe("triage scan on Kafka", () => {
  const kit = new KafkaKit();
  const adapter = new KafkaAdapter(kafkaConfig({ id: `tri-kafka-${randomUUID().slice(0, 6)}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  cleanups.push(
    () => kit.cleanup(),
    () => adapter.close(),
  );

  it("indexes partition/offset positions and groups Spring DLT headers", async () => {
    const records = Array.from({ length: 10 }, (_, i) => ({ body: enc(`{"i":${i}}`), partition: i % 2 }));
    const { dlt, source } = await kit.springDlt(records, {
      partitions: 2,
      fails: (_v, i) =>
        i % 3 === 0
          ? {
              exceptionClass: "org.springframework.dao.CannotAcquireLockException",
              message: `could not obtain lock on row ${i} in relation "orders"`,
            }
          : {
              exceptionClass: "java.lang.NullPointerException",
              message: `Cannot invoke "String.length()" because "name" is null (record ${i})`,
            },
    });
    const job = await scan(adapter, dlt);
    expect(job.state).toBe("succeeded");
    expect(job.progress).toMatchObject({ read: 10 });
    const groups = await groupCounts(adapter.connectionId, dlt);
    expect(groups.map((g) => g.count)).toEqual([6, 4]);
    expect(groups[0].disposition).toBe("permanent");
    expect(groups[1].disposition).toBe("transient");
    expect(groups[0].origins).toEqual([source]);
    const page = await queryLetters({ connectionId: adapter.connectionId, queue: dlt }, { limit: 100 });
    expect(page.rows.every((r) => r.kafkaPartition !== null && r.kafkaOffset !== null)).toBe(true);
    expect(new Set(page.rows.map((r) => `${r.kafkaPartition}/${r.kafkaOffset}`)).size).toBe(10);
    // Rescan: same letters, nothing duplicated, nothing gone.
    expect((await scan(adapter, dlt)).progress).toMatchObject({ read: 10, gone: 0 });
    expect(await rowCount(adapter.connectionId, dlt)).toBe(10);
  });
});
