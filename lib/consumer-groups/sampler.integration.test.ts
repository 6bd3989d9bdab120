import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { startCrashLoopConsumer, type CrashLoopConsumer } from "@/lib/brokers/kafka/crash-loop-consumer";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import type { KafkaConnectionConfig } from "@/lib/config";
import { getDb } from "@/lib/db";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { sampleConsumerGroups } from "./sampler";
import { groupDetail, listGroupRows, partitionRow, roundOf } from "./store";

/**
 * The consumer-group sampler on the real Kafka and Postgres: a consumer crash-looping on one poison
 * record in one partition of three, sampled in rounds whose clock is injected (the connection's
 * stuckAfterSeconds is 60; the rounds are "minutes" apart without sleeping).
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CG = "cg-sampler-it";
const STUCK_AFTER_MS = 60_000;
const kit = new KafkaKit();
const adapters: BrokerAdapter[] = [];
let dir = "";
/** Groups other tests left on the shared Kafka, excluded so the rounds stay small. */
let others: string[] = [];

function writeConfig(connection: KafkaConnectionConfig) {
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ connections: [connection] }));
}

async function adapterOf(connection: KafkaConnectionConfig): Promise<BrokerAdapter> {
  writeConfig(connection);
  const { resetConfigCache } = await import("@/lib/config");
  resetConfigCache();
  const { createAdapter } = await import("@/lib/connections/registry");
  const a = createAdapter(connection);
  adapters.push(a);
  return a;
}

const connection = (over: Partial<KafkaConnectionConfig> = {}) =>
  testConfig({
    id: CG,
    consumerGroups: {
      sample: true,
      stuckAfterSeconds: STUCK_AFTER_MS / 1000,
      exclude: [`${kit.prefix}-tool*`, ...others],
      dlts: [],
      createDlt: true,
    },
    ...over,
  });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "dlq-cg-sampler-"));
  process.env.DLQ_CONSOLE_CONFIG = path.join(dir, "config.json");
  others = (await (await kit.getAdmin()).listGroups()).groups.map((g) => g.groupId);
});

afterAll(async () => {
  await Promise.allSettled(adapters.map((a) => a.close()));
  await kit.cleanup();
  const { resetConfigCache } = await import("@/lib/config");
  delete process.env.DLQ_CONSOLE_CONFIG;
  resetConfigCache();
  rmSync(dir, { recursive: true, force: true });
});

describe("sampleConsumerGroups on a real Kafka", () => {
  const consumers: CrashLoopConsumer[] = [];
  afterAll(async () => {
    for (const c of consumers) await c.stop().catch(() => undefined);
  });

  it("flags only the partition stuck behind a poison record, clears it once skipped, forgets deleted groups, never stores excluded ones, and keeps the rows while the broker is down", async () => {
    const adapter = await adapterOf(connection());
    const ops = adapter.consumerGroups!;
    const topic = await kit.createTopic(kit.name("payments"), 3);
    kit.topics.add(`${topic}.DLT`);
    const group = `${kit.prefix}-payments-app`;
    const gone = `${kit.prefix}-gone`;
    const tooling = `${kit.prefix}-tooling`;
    kit.groups.add(group).add(gone).add(tooling);
    const producer = await kit.getProducer();
    const send = (partition: number, value: string, key = `k-${partition}`) =>
      producer.send({ topic, acks: -1, messages: [{ partition, key, value }] });
    for (let i = 0; i < 3; i++) for (const p of [0, 2]) await send(p, `ok ${p}/${i}`);
    for (let i = 0; i < 2; i++) await send(1, `ok 1/${i}`);
    await send(1, "poison", "poison");
    for (let i = 3; i < 6; i++) await send(1, `ok 1/${i}`);

    // Two groups that only hold committed offsets: one to delete later, one excluded by the config.
    const admin = await kit.getAdmin();
    for (const g of [gone, tooling])
      await admin.setOffsets({
        groupId: g,
        topic,
        partitions: [0, 1, 2].map((partition) => ({ partition, offset: "1" })),
      });

    const app = await startCrashLoopConsumer(kit.kafka, {
      groupId: group,
      topic,
      isPoison: (m) => m.key?.toString() === "poison",
    });
    consumers.push(app);
    const committed = async () => {
      const r = await ops.read();
      const g = r.groups.find((x) => x.groupId === group);
      return {
        state: g?.state,
        offsets: [0, 1, 2].map(
          (p) => g?.partitions.find((x) => x.topic === topic && x.partition === p)?.committed ?? null,
        ),
      };
    };
    const waitFor = async (done: (c: Awaited<ReturnType<typeof committed>>) => boolean) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const c = await committed();
        if (done(c)) return c;
        if (Date.now() > deadline)
          throw new Error(`not reached: ${JSON.stringify(c, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
        await sleep(200);
      }
    };
    await waitFor((c) => c.offsets[0] === 3n && c.offsets[1] === 2n && c.offsets[2] === 3n);
    await app.until(() => app.failures >= 2);

    // Round 1.
    const t0 = new Date();
    const r1 = await sampleConsumerGroups({ adapters: [adapter], now: () => t0 });
    expect(r1.connections).toEqual([expect.objectContaining({ connectionId: CG, ok: true, error: null })]);
    expect(r1.connections[0].calls).toBeGreaterThan(0);
    const opts1 = { now: t0, stuckAfterMs: STUCK_AFTER_MS };
    expect(await groupDetail(CG, gone, opts1)).toMatchObject({ group: { groupId: gone, partitions: 3 } });
    expect(await groupDetail(CG, tooling, opts1)).toBeNull();

    // The other partitions keep draining between the rounds.
    for (const p of [0, 2]) await send(p, `more ${p}`);
    await waitFor((c) => c.offsets[0] === 4n && c.offsets[2] === 4n);

    // Round 2, two "minutes" later: only the poison partition is stuck, since round 1.
    const t2 = new Date(t0.getTime() + 2 * STUCK_AFTER_MS);
    const r2 = await sampleConsumerGroups({ adapters: [adapter], now: () => t2 });
    // (Groups other tests create meanwhile on the shared Kafka may be stuck too.)
    expect(r2.connections[0]).toMatchObject({ ok: true });
    expect(r2.connections[0].stuck).toBeGreaterThanOrEqual(1);
    const opts2 = { now: t2, stuckAfterMs: STUCK_AFTER_MS };
    const rows = await listGroupRows(CG, opts2);
    const row = rows.find((g) => g.groupId === group)!;
    expect(row).toMatchObject({
      connectionId: CG,
      state: "Stable",
      stuck: 1,
      partitions: 3,
      topics: [topic],
      lag: 4n,
      problem: null,
      sampledAt: t2,
    });
    expect(row.protocol).toBeTruthy();
    expect(row.members).toEqual([
      expect.objectContaining({ clientId: "dlq-console-test-kit", assignments: [{ topic, partitions: [0, 1, 2] }] }),
    ]);
    // Stuck groups first, then by lag, then by id.
    const firstUnstuck = rows.findIndex((g) => g.stuck === 0);
    expect(rows.slice(firstUnstuck === -1 ? rows.length : firstUnstuck).every((g) => g.stuck === 0)).toBe(true);
    // The offsets-only group has no consumer: all three partitions stuck, and more lag, so it comes first.
    expect(rows.find((g) => g.groupId === gone)).toMatchObject({ stuck: 3, lag: 11n, members: [] });
    expect(rows.findIndex((g) => g.groupId === gone)).toBeLessThan(rows.findIndex((g) => g.groupId === group));
    expect(rows.some((g) => g.groupId === tooling)).toBe(false);

    const detail = (await groupDetail(CG, group, opts2))!;
    expect(
      detail.partitions.map((p) => [p.partition, p.committed, p.end, p.lag, p.stuck, p.since, p.stuckForMs]),
    ).toEqual([
      [0, 4n, 4n, 0n, false, null, null],
      [1, 2n, 6n, 4n, true, t0, 2 * STUCK_AFTER_MS],
      [2, 4n, 4n, 0n, false, null, null],
    ]);
    expect(detail.partitions[1]).toMatchObject({ start: 0n, sampledAt: t2 });
    expect(detail.partitions[1].member).toMatch(/^dlq-console-test-kit\/.+/);
    // Read with a clock before the threshold, the same row is not stuck yet.
    expect(
      await partitionRow(CG, group, topic, 1, {
        now: new Date(t0.getTime() + STUCK_AFTER_MS - 1),
        stuckAfterMs: STUCK_AFTER_MS,
      }),
    ).toMatchObject({ stuck: false, stuckForMs: null, since: t0 });
    expect(await roundOf(CG)).toEqual({
      sampledAt: t2,
      error: null,
      calls: r2.connections[0].calls,
      groups: r2.connections[0].groups,
    });

    // The consumer is scaled to zero, the poison record skipped to the DLT, a group deleted.
    await app.stop();
    await waitFor((c) => c.state === "Empty");
    const skip = await ops.skipToDlt({
      groupId: group,
      topic,
      partition: 1,
      expectedCommitted: 2n,
      reason: "poison",
      createDlt: true,
    });
    expect(skip).toMatchObject({ committedBefore: 2n, committedAfter: 3n });
    await admin.deleteGroups([gone]);

    // Round 3: the committed offset moved, so the run starts again; the deleted group is gone.
    const t3 = new Date(t2.getTime() + STUCK_AFTER_MS);
    const r3 = await sampleConsumerGroups({ adapters: [adapter], now: () => t3 });
    expect(r3.connections[0]).toMatchObject({ ok: true });
    const opts3 = { now: t3, stuckAfterMs: STUCK_AFTER_MS };
    expect((await listGroupRows(CG, opts3)).find((g) => g.groupId === group)).toMatchObject({
      state: "Empty",
      stuck: 0,
      lag: 3n,
      members: [],
    });
    expect(await partitionRow(CG, group, topic, 1, opts3)).toMatchObject({
      committed: 3n,
      lag: 3n,
      since: t3,
      stuck: false,
      member: null,
    });
    expect(await groupDetail(CG, gone, opts3)).toBeNull();
    expect(await partitionRow(CG, gone, topic, 0, opts3)).toBeNull();
    expect(
      await getDb().consumerGroupPartition.count({ where: { connectionId: CG, groupId: { in: [gone, tooling] } } }),
    ).toBe(0);

    // The same connection with its broker down: the error is recorded and every row kept as it was.
    const before = await groupDetail(CG, group, opts3);
    const down = await adapterOf(connection({ brokers: ["127.0.0.1:1"] }));
    const t4 = new Date(t3.getTime() + STUCK_AFTER_MS);
    const r4 = await sampleConsumerGroups({ adapters: [down], now: () => t4 });
    expect(r4.connections).toEqual([expect.objectContaining({ connectionId: CG, ok: false, groups: 0, stuck: 0 })]);
    expect(r4.connections[0].error).toEqual(expect.any(String));
    expect(await roundOf(CG)).toMatchObject({ sampledAt: t4, error: r4.connections[0].error });
    expect(await groupDetail(CG, group, opts3)).toEqual(before);
  });

  it("sends the same number of database statements per round whatever the number of groups", async () => {
    const adapter = await adapterOf(connection());
    const topic = await kit.createTopic(kit.name("counted"), 2);
    const admin = await kit.getAdmin();
    const db = new PrismaClient({
      adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL! }),
      log: [{ emit: "event", level: "query" }],
    });
    const statements: string[] = [];
    db.$on("query", (e) => statements.push(e.query));
    try {
      const counted = async () => {
        statements.length = 0;
        const r = await sampleConsumerGroups({ adapters: [adapter], db });
        expect(r.connections[0]).toMatchObject({ ok: true });
        // Each statement by its first words and table (BEGIN is not logged by the pg adapter).
        return {
          statements: statements.map((q) => q.replace(/\s+/g, " ").trim().split(" ").slice(0, 3).join(" ")),
          groups: r.connections[0].groups,
        };
      };
      const first = await counted();
      const extra = [1, 2, 3, 4, 5].map((i) => `${kit.prefix}-extra-${i}`);
      for (const g of extra) kit.groups.add(g);
      await Promise.all(
        extra.map((groupId) =>
          admin.setOffsets({ groupId, topic, partitions: [0, 1].map((partition) => ({ partition, offset: "0" })) }),
        ),
      );
      const second = await counted();
      const stored = await db.consumerGroupStatus.count({ where: { connectionId: CG, groupId: { in: extra } } });
      expect(stored).toBe(extra.length);
      expect(second.groups).toBeGreaterThan(0);
      expect(first.statements).toEqual([
        "SELECT group_id, topic,",
        "INSERT INTO consumer_group_status",
        "INSERT INTO consumer_group_partitions",
        "DELETE FROM consumer_group_partitions",
        "WITH gone AS",
        "INSERT INTO consumer_group_rounds",
        "COMMIT",
      ]);
      expect(second.statements).toEqual(first.statements);
    } finally {
      await db.$disconnect();
    }
  });
});
