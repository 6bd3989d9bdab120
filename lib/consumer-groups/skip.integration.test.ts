import { randomUUID } from "node:crypto";
import type { IHeaders } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testActors, useConsoleConfig } from "@/test/console-config";
import type { Actor } from "@/lib/auth/session";
import { openGroupClient, SKIP_EXCEPTION_FQCN } from "@/lib/brokers/kafka/consumer-group-skip";
import { startCrashLoopConsumer, type CrashLoopConsumer } from "@/lib/brokers/kafka/crash-loop-consumer";
import { KafkaKit, int32be, int64be, testConfig } from "@/lib/brokers/kafka/test-kit";
import { getDb } from "@/lib/db";
import { asAppError, httpStatusOf } from "@/lib/errors";
import { JobWorker } from "@/lib/jobs/worker";
import { groupSkipHandler } from "./skip-handler";
import { cancelSkip, listSkips, planSkip, startSkip, viewSkip, type SkipView } from "./skip";

/**
 * The skip of a stuck partition as a job, through the use cases and the job handler, on the real
 * Kafka and Postgres: a real consumer group crash-loops on a poison record (crash-loop-consumer.ts).
 */
const CONN = "skip-kafka";
const RABBIT = "skip-rabbit";
const kit = new KafkaKit();
const consumers: CrashLoopConsumer[] = [];
const actors = {} as Record<"viewer" | "operator" | "admin", Actor>;
const meta = () => ({ requestId: `skip-${randomUUID()}`, ip: "127.0.0.1" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const buf = (v: unknown) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
let consoleConfig: Awaited<ReturnType<typeof useConsoleConfig>>;
let client: Awaited<ReturnType<typeof openGroupClient>>;

beforeAll(async () => {
  const config = {
    connections: [
      testConfig({
        id: CONN,
        consumerGroups: {
          sample: false,
          stuckAfterSeconds: 300,
          exclude: [],
          dlts: [{ group: `${kit.prefix}-custom-*`, dlt: "{topic}.custom-dead" }],
          createDlt: true,
        },
      }),
      { kind: "rabbitmq", id: RABBIT, url: "amqp://127.0.0.1:5672" },
    ],
  };
  consoleConfig = await useConsoleConfig(config);
  Object.assign(actors, await testActors("group-skip.test", ["viewer", "operator", "admin"]));
  client = await openGroupClient(testConfig());
});

afterAll(async () => {
  for (const c of consumers) await c.stop().catch(() => undefined);
  await client?.close();
  await kit.cleanup();
  await consoleConfig.restore();
});

const startApp = async (
  groupId: string,
  topic: string,
  isPoison: Parameters<typeof startCrashLoopConsumer>[1]["isPoison"],
) => {
  kit.groups.add(groupId);
  const c = await startCrashLoopConsumer(kit.kafka, { groupId, topic, isPoison });
  consumers.push(c);
  return c;
};

/** Plans until `done` holds (the group's consumer commits asynchronously). */
async function planUntil(
  input: Record<string, unknown>,
  done: (p: Awaited<ReturnType<typeof planSkip>>) => boolean,
  ms = 30_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const p = await planSkip(actors.admin, meta(), input).catch((e: unknown) => e);
    if (!(p instanceof Error) && done(p as Awaited<ReturnType<typeof planSkip>>))
      return p as Awaited<ReturnType<typeof planSkip>>;
    if (Date.now() > deadline)
      throw new Error(`plan not as expected after ${ms} ms: ${p instanceof Error ? p.message : JSON.stringify(p)}`);
    await sleep(300);
  }
}

async function viewUntil(jobId: string, done: (v: SkipView) => boolean, ms = 30_000): Promise<SkipView> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await viewSkip(actors.viewer, meta(), { jobId });
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`skip ${jobId} not as expected after ${ms} ms: ${JSON.stringify(v)}`);
    await sleep(200);
  }
}

const worker = (jobId: string) =>
  new JobWorker({
    handlers: { "group-skip": groupSkipHandler({ pollMs: 250 }) },
    owner: `skip-test-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    scope: { jobIds: [jobId] },
  });
const auditOf = (operationId: string) =>
  getDb().auditEvent.findMany({ where: { operationId }, orderBy: { id: "asc" } });
const auditByRequest = (requestId: string) =>
  getDb().auditEvent.findMany({ where: { requestId }, orderBy: { id: "asc" } });
const endOffsets = async (topic: string) =>
  (await client.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, o.high]).sort();

describe("skipping a poison record to the DLT as a job", () => {
  it("waits while the crash-looping group has members, then copies the record byte for byte and moves the offset by one; the restarted consumer drains the partition", async () => {
    const topic = await kit.createTopic(kit.name("payments"), 2);
    const dlt = `${topic}.DLT`;
    kit.topics.add(dlt);
    const group = `${kit.prefix}-payments-app`;
    const producer = await kit.getProducer();
    const poisonKey = Buffer.from([0x00, 0xff, 0x10, 0x80]);
    const poison = {
      partition: 1,
      key: poisonKey,
      value: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x00, 0x01, 0xfe]),
      headers: {
        "content-type": Buffer.from("application/x-weird"),
        "trace-bin": Buffer.from([0xde, 0xad, 0xbe, 0xef]),
      } as IHeaders,
      timestamp: String(Date.now() - 60_000),
    };
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { partition: 1, key: "k", value: "ok 1/0" },
        { partition: 0, key: "k", value: "ok 0/0" },
      ],
    });
    await producer.send({ topic, acks: -1, messages: [poison] });
    await producer.send({
      topic,
      acks: -1,
      messages: [
        { partition: 1, key: "k", value: "ok 1/2" },
        { partition: 1, key: "k", value: "ok 1/3" },
      ],
    });
    const isPoison = (m: { key: Buffer | null }) => !!m.key && m.key.equals(poisonKey);
    const app = await startApp(group, topic, isPoison);
    await app.until(() => app.failures >= 2);

    const ref = { connectionId: CONN, groupId: group, topic, partition: 1 };
    const plan = await planUntil(ref, (p) => p.committed === "1" && p.members.length === 1);
    expect(plan).toMatchObject({
      committed: "1",
      firstOffset: "1",
      upToOffset: "1",
      count: 1,
      end: "4",
      dlt,
      dltExists: false,
      willCreate: true,
      canRunNow: false,
    });
    const member = plan.members[0];
    expect(member.memberId).toBeTruthy();

    // While the consumer runs, without waiting: refused (409), naming the member, on record; nothing copied.
    const m1 = meta();
    const start = {
      ...ref,
      expectedCommitted: "1",
      upToOffset: "1",
      confirmedCount: 1,
      reason: "bad currency code (INC-1)",
    };
    const refused = asAppError(
      await startSkip(actors.admin, m1, { ...start, waitForEmpty: false }).catch((e: unknown) => e),
    );
    expect(refused?.code).toBe("conflict:consumer-group");
    expect(httpStatusOf(refused!)).toBe(409);
    expect(refused?.userMessage).toContain(member.memberId);
    const refusedRows = await auditByRequest(m1.requestId);
    expect(refusedRows.map((r) => [r.action, r.outcome])).toEqual([["group.skip", "failure"]]);
    expect(refusedRows[0].details).toMatchObject({ error: "conflict:consumer-group", members: [member] });
    expect(await client.admin.listTopics()).not.toContain(dlt);
    expect(await getDb().job.count({ where: { kind: "group-skip", connectionId: CONN, queue: topic } })).toBe(0);

    // With waitForEmpty: the job waits and shows the member.
    const m2 = meta();
    const job = await startSkip(actors.admin, m2, { ...start, waitForEmpty: true });
    expect(job).toMatchObject({
      state: "queued",
      params: {
        groupId: group,
        topic,
        partition: 1,
        expectedCommitted: "1",
        upToOffset: "1",
        count: 1,
        dlt,
        createDlt: true,
        waitForEmpty: true,
      },
    });
    const running = worker(job.id).runOnce();
    const waiting = await viewUntil(job.id, (v) => v.progress.waiting === true);
    expect(waiting.state).toBe("running");
    expect(waiting.progress).toMatchObject({ phase: "waiting", members: [member] });
    expect(await client.admin.listTopics()).not.toContain(dlt);

    // Scaled to zero: the job proceeds on its own.
    await app.stop();
    await running;
    const done = await viewSkip(actors.viewer, meta(), { jobId: job.id });
    expect(done.state).toBe("succeeded");
    expect(done.progress).toMatchObject({
      phase: "done",
      waiting: false,
      committedBefore: "1",
      committedAfter: "2",
      dlt,
      dltCreated: true,
      copies: [{ offset: "1", dltPartition: 1, dltOffset: "0" }],
    });
    expect(await endOffsets(dlt)).toEqual([
      [0, "0"],
      [1, "1"],
    ]);

    // The copy, byte for byte, with Spring's kafka_dlt headers naming its origin and the reason.
    const copy = await (await import("@/lib/brokers/kafka/consumer-group-skip")).readRecordAt(client, {
      topic: dlt,
      partition: 1,
      offset: 0n,
    });
    if (copy.kind !== "record") throw new Error(`expected the copy, got ${copy.kind}`);
    const r = copy.record;
    expect(Buffer.from(r.key!).equals(poison.key)).toBe(true);
    expect(Buffer.from(r.value!).equals(poison.value)).toBe(true);
    expect(r.timestamp).toBe(poison.timestamp);
    const h = r.headers as Record<string, unknown>;
    expect(buf(h["content-type"]).equals(Buffer.from("application/x-weird"))).toBe(true);
    expect(buf(h["trace-bin"]).equals(Buffer.from([0xde, 0xad, 0xbe, 0xef]))).toBe(true);
    expect(buf(h["kafka_dlt-original-topic"]).toString()).toBe(topic);
    expect(buf(h["kafka_dlt-original-partition"]).equals(int32be(1))).toBe(true);
    expect(buf(h["kafka_dlt-original-offset"]).equals(int64be(1n))).toBe(true);
    expect(buf(h["kafka_dlt-original-consumer-group"]).toString()).toBe(group);
    expect(buf(h["kafka_dlt-exception-message"]).toString()).toBe("bad currency code (INC-1)");
    expect(buf(h["kafka_dlt-exception-fqcn"]).toString()).toBe(SKIP_EXCEPTION_FQCN);

    // The restarted application drains the partition without the poison record.
    const again = await startApp(group, topic, isPoison);
    await again.until((c) => c.filter((x) => x.partition === 1).length === 2);
    expect(again.consumed.filter((x) => x.partition === 1).map((x) => [x.offset, x.value])).toEqual([
      ["2", "ok 1/2"],
      ["3", "ok 1/3"],
    ]);
    expect(again.failures).toBe(0);
    await again.stop();

    // Every step on record under the job's operation id, with the offsets before and after.
    const rows = await auditOf(job.id);
    expect(rows.map((x) => [x.action, x.outcome, x.scope])).toEqual([
      ["group.skip", "success", "operation"],
      ["group.skipped", "success", "letter"],
      ["group.skip_finished", "success", "operation"],
    ]);
    expect(rows[0]).toMatchObject({
      actorId: actors.admin.id,
      requestId: m2.requestId,
      connectionId: CONN,
      queue: topic,
    });
    expect(rows[0].details).toMatchObject({
      groupId: group,
      topic,
      partition: 1,
      expectedCommitted: "1",
      upToOffset: "1",
      count: 1,
      dlt,
      reason: "bad currency code (INC-1)",
    });
    expect(rows[1]).toMatchObject({ queue: dlt, target: "1-0" });
    expect(rows[1].details).toMatchObject({
      groupId: group,
      topic,
      partition: 1,
      offset: "1",
      dlt,
      dltPartition: 1,
      dltOffset: "0",
      committedBefore: "1",
      committedAfter: "2",
    });
    expect(rows[2].details).toMatchObject({
      state: "succeeded",
      committedBefore: "1",
      committedAfter: "2",
      copied: 1,
      dltCreated: true,
    });

    // Listed for the group; a viewer may read skips.
    expect((await listSkips(actors.viewer, meta(), { connectionId: CONN, groupId: group })).map((s) => s.id)).toEqual([
      job.id,
    ]);
    expect(await listSkips(actors.viewer, meta(), { connectionId: CONN, groupId: `${group}-other` })).toEqual([]);

    // A cancelled waiting skip (another group stuck on the same record) copies nothing and leaves the offset.
    const group2 = `${kit.prefix}-payments-audit`;
    const app2 = await startApp(group2, topic, isPoison);
    await app2.until(() => app2.failures >= 2);
    const ref2 = { ...ref, groupId: group2 };
    await planUntil(ref2, (p) => p.committed === "1" && p.members.length === 1);
    const waitingJob = await startSkip(actors.admin, meta(), {
      ...ref2,
      expectedCommitted: "1",
      upToOffset: "1",
      confirmedCount: 1,
      reason: "not yet",
      waitForEmpty: true,
    });
    const run2 = worker(waitingJob.id).runOnce();
    await viewUntil(waitingJob.id, (v) => v.progress.waiting === true);
    const mc = meta();
    const cancelling = await cancelSkip(actors.admin, mc, { jobId: waitingJob.id });
    expect(cancelling.state).toBe("cancelling");
    await run2;
    const cancelled = await viewSkip(actors.admin, meta(), { jobId: waitingJob.id });
    expect(cancelled.state).toBe("cancelled");
    expect(cancelled.progress.copies).toBeUndefined();
    expect(await endOffsets(dlt)).toEqual([
      [0, "0"],
      [1, "1"],
    ]);
    expect((await auditByRequest(mc.requestId)).map((x) => [x.action, x.outcome, x.operationId])).toEqual([
      ["group.skip_cancel", "success", waitingJob.id],
    ]);
    const cancelRows = await auditOf(waitingJob.id);
    expect(cancelRows.map((x) => x.action)).toEqual(["group.skip", "group.skip_cancel", "group.skip_finished"]);
    expect(cancelRows[2].details).toMatchObject({ state: "cancelled", copied: 0 });
    await app2.stop();
    const after = await planUntil(ref2, (p) => p.members.length === 0);
    expect(after.committed).toBe("1");
  }, 180_000);

  it("skips three records up to an offset only with their count confirmed, copying all three first, to the group's configured DLT", async () => {
    const topic = await kit.createTopic(kit.name("invoices"), 1);
    const group = `${kit.prefix}-custom-invoices`;
    const dlt = `${topic}.custom-dead`;
    kit.topics.add(dlt);
    const producer = await kit.getProducer();
    for (const v of ["ok 0", "bad 1", "bad 2", "worse 3", "ok 4"])
      await producer.send({ topic, acks: -1, messages: [{ partition: 0, key: "inv", value: v }] });
    const app = await startApp(group, topic, (m) => /^(bad|worse)/.test(m.value?.toString() ?? ""));
    await app.until(() => app.failures >= 2);
    await app.stop();

    const ref = { connectionId: CONN, groupId: group, topic, partition: 0 };
    const one = await planUntil(ref, (p) => p.committed === "1" && p.members.length === 0);
    expect(one).toMatchObject({ count: 1, upToOffset: "1", dlt, dltExists: false, willCreate: true, canRunNow: true });
    const three = await planSkip(actors.admin, meta(), { ...ref, upToOffset: "3" });
    expect(three).toMatchObject({ committed: "1", firstOffset: "1", upToOffset: "3", count: 3 });

    // Outside what the group has left to read; unknown group or partition; a connection without groups.
    const code = async (p: Promise<unknown>) => asAppError(await p.catch((e: unknown) => e))?.code;
    expect(await code(planSkip(actors.admin, meta(), { ...ref, upToOffset: "5" }))).toBe("bad_request:group-skip");
    expect(await code(planSkip(actors.admin, meta(), { ...ref, upToOffset: "0" }))).toBe("bad_request:group-skip");
    expect(await code(planSkip(actors.admin, meta(), { ...ref, groupId: `${group}-none` }))).toBe(
      "not_found:consumer-group",
    );
    expect(await code(planSkip(actors.admin, meta(), { ...ref, partition: 7 }))).toBe("not_found:consumer-group");
    expect(await code(planSkip(actors.admin, meta(), { ...ref, connectionId: RABBIT }))).toBe(
      "bad_request:consumer-groups",
    );

    const start = {
      ...ref,
      expectedCommitted: "1",
      upToOffset: "3",
      reason: "invoices 1-3 belong to a cancelled batch",
      waitForEmpty: false,
    };
    const m1 = meta();
    const wrongCount = asAppError(
      await startSkip(actors.admin, m1, { ...start, confirmedCount: 2 }).catch((e: unknown) => e),
    );
    expect(wrongCount).toMatchObject({ code: "conflict:count", details: { count: 3 } });
    expect(
      (await auditByRequest(m1.requestId)).map((x) => [x.action, x.outcome, (x.details as { error?: string }).error]),
    ).toEqual([["group.skip", "failure", "conflict:count"]]);
    const stale = asAppError(
      await startSkip(actors.admin, meta(), { ...start, expectedCommitted: "0", confirmedCount: 3 }).catch(
        (e: unknown) => e,
      ),
    );
    expect(stale?.code).toBe("conflict:committed-offset");
    expect(await code(startSkip(actors.admin, meta(), { ...start, confirmedCount: 3, reason: "  x " }))).toBe(
      "bad_request:group-skip",
    );
    expect(await client.admin.listTopics()).not.toContain(dlt);

    const job = await startSkip(actors.admin, meta(), { ...start, confirmedCount: 3 });
    expect(job.params).toMatchObject({ count: 3, dlt, upToOffset: "3" });
    await worker(job.id).runOnce();
    const done = await viewSkip(actors.admin, meta(), { jobId: job.id });
    expect(done.state).toBe("succeeded");
    expect(done.progress).toMatchObject({
      committedBefore: "1",
      committedAfter: "4",
      dlt,
      copies: [
        { offset: "1", dltPartition: 0, dltOffset: "0" },
        { offset: "2", dltPartition: 0, dltOffset: "1" },
        { offset: "3", dltPartition: 0, dltOffset: "2" },
      ],
    });
    expect((await kit.readAll(dlt)).map((r) => [r.value, r.headers["kafka_dlt-exception-message"]])).toEqual([
      ["bad 1", "invoices 1-3 belong to a cancelled batch"],
      ["bad 2", "invoices 1-3 belong to a cancelled batch"],
      ["worse 3", "invoices 1-3 belong to a cancelled batch"],
    ]);
    const rows = await auditOf(job.id);
    expect(rows.map((x) => x.action)).toEqual([
      "group.skip",
      "group.skipped",
      "group.skipped",
      "group.skipped",
      "group.skip_finished",
    ]);
    expect(rows.slice(1, 4).map((x) => (x.details as { offset: string }).offset)).toEqual(["1", "2", "3"]);
    expect(rows[4].details).toMatchObject({ committedBefore: "1", committedAfter: "4", copied: 3 });

    const again = await startApp(group, topic, () => false);
    await again.until((c) => c.some((x) => x.offset === "4"));
    expect(again.consumed.map((x) => x.value)).toEqual(["ok 4"]);
    await again.stop();
  }, 180_000);

  it("fails a skip whose committed offset moved before it ran, with nothing copied; a resumed run whose earlier run committed ends succeeded", async () => {
    const topic = await kit.createTopic(kit.name("ledger"), 1);
    const producer = await kit.getProducer();
    for (const v of ["a", "b", "c", "d"])
      await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: v }] });
    /** An empty group that only stores offsets (as tools make), committed at `offset`. */
    const commit = async (groupId: string, offset: number) => {
      kit.groups.add(groupId);
      const coord = await (
        client.cluster as unknown as {
          findGroupCoordinator(a: { groupId: string }): Promise<{ offsetCommit(r: unknown): Promise<unknown> }>;
        }
      ).findGroupCoordinator({ groupId });
      await coord.offsetCommit({
        groupId,
        groupGenerationId: -1,
        memberId: "",
        topics: [{ topic, partitions: [{ partition: 0, offset: String(offset) }] }],
      });
    };
    const dlt = `${topic}.DLT`;
    kit.topics.add(dlt);

    // Moved on between the start and the run: the job fails with the reason, nothing is copied.
    const moved = `${kit.prefix}-ledger-moved`;
    await commit(moved, 1);
    const ref = { connectionId: CONN, groupId: moved, topic, partition: 0 };
    await planUntil(ref, (p) => p.committed === "1");
    const job = await startSkip(actors.admin, meta(), {
      ...ref,
      expectedCommitted: "1",
      upToOffset: "1",
      confirmedCount: 1,
      reason: "bad row",
      waitForEmpty: false,
    });
    await commit(moved, 2);
    await worker(job.id).runOnce();
    const failed = await viewSkip(actors.admin, meta(), { jobId: job.id });
    expect(failed.state).toBe("failed");
    expect(failed.error).toContain("is 2, not 1");
    expect(failed.error).toContain("Nothing was skipped");
    expect(await client.admin.listTopics()).not.toContain(dlt);
    const rows = await auditOf(job.id);
    expect(rows.map((x) => [x.action, x.outcome])).toEqual([
      ["group.skip", "success"],
      ["group.skip_finished", "failure"],
    ]);

    // The earlier run committed and stopped before recording it: the resumed run sees its own commit.
    const resumed = `${kit.prefix}-ledger-resumed`;
    await commit(resumed, 1);
    const ref2 = { ...ref, groupId: resumed };
    await planUntil(ref2, (p) => p.committed === "1");
    const job2 = await startSkip(actors.admin, meta(), {
      ...ref2,
      expectedCommitted: "1",
      upToOffset: "2",
      confirmedCount: 2,
      reason: "two bad rows",
      waitForEmpty: false,
    });
    const { skipToDlt } = await import("@/lib/brokers/kafka/consumer-group-skip");
    const first = await skipToDlt(client, {
      groupId: resumed,
      topic,
      partition: 0,
      expectedCommitted: 1n,
      upToOffset: 2n,
      dlt,
      createDlt: true,
      reason: "two bad rows",
    });
    expect(first.committedAfter).toBe(3n);
    await getDb().job.update({ where: { id: job2.id }, data: { checkpoint: { phase: "skipping" } } });
    await worker(job2.id).runOnce();
    const ok = await viewSkip(actors.admin, meta(), { jobId: job2.id });
    expect(ok.state).toBe("succeeded");
    expect(ok.progress).toMatchObject({ phase: "done", resumed: true, committedBefore: "1", committedAfter: "3" });
    expect(await endOffsets(dlt)).toEqual([[0, "2"]]);
    expect(
      (await auditOf(job2.id)).map((x) => [x.action, x.outcome, (x.details as { resumed?: boolean }).resumed ?? null]),
    ).toEqual([
      ["group.skip", "success", null],
      ["group.skip_finished", "success", true],
    ]);
  }, 120_000);

  it("refuses viewers and operators before anything is read, and on record; every role may read skips", async () => {
    const cases = [
      {
        run: (a: Actor, m: ReturnType<typeof meta>) =>
          planSkip(a, m, { connectionId: "no-such-connection", groupId: "g", topic: "t", partition: 0 }),
        action: "group.skip_plan",
      },
      {
        run: (a: Actor, m: ReturnType<typeof meta>) =>
          startSkip(a, m, {
            connectionId: "no-such-connection",
            groupId: "g",
            topic: "t",
            partition: 0,
            expectedCommitted: "0",
            upToOffset: "0",
            confirmedCount: 1,
            reason: "poison",
            waitForEmpty: true,
          }),
        action: "group.skip",
      },
      {
        run: (a: Actor, m: ReturnType<typeof meta>) => cancelSkip(a, m, { jobId: randomUUID() }),
        action: "group.skip_cancel",
      },
    ];
    for (const role of ["viewer", "operator"] as const) {
      for (const c of cases) {
        const m = meta();
        const e = asAppError(await c.run(actors[role], m).catch((x: unknown) => x));
        // An unknown connection or job would be "not found" had anything been read first.
        expect(e?.code, `${role} ${c.action}`).toBe("forbidden:groups:skip");
        expect(httpStatusOf(e!)).toBe(403);
        const rows = await auditByRequest(m.requestId);
        expect(rows.map((x) => [x.action, x.outcome, x.actorRole])).toEqual([[c.action, "denied", role]]);
      }
      expect(await listSkips(actors[role], meta(), { connectionId: CONN })).toEqual(expect.any(Array));
    }
    expect(
      asAppError(await viewSkip(actors.viewer, meta(), { jobId: randomUUID() }).catch((e: unknown) => e))?.code,
    ).toBe("not_found:group-skip");
  });
});
