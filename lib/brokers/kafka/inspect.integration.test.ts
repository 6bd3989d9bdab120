import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AssignerProtocol, ConfigResourceTypes } from "kafkajs";
import type { BrokerInspection, ConfigFinding, DlqVitals } from "@/lib/brokers/contract/inspection";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const DAY = 86_400_000;
const MIN_RETENTION = 7 * DAY;

describe("Kafka inspect on a real broker", () => {
  const tag = randomUUID().slice(0, 8);
  const kit = new KafkaKit(`insp-${tag}`);
  const t = {
    vitals: `insp-${tag}-vitals.DLT`,
    short: `insp-${tag}-short.DLT`,
    compact: `insp-${tag}-compact.DLT`,
    origin: `insp-${tag}-orders`,
    // Both name the origin by the default patterns `*.DLT` and `*-dlt`.
    fewer: `insp-${tag}-orders.DLT`,
    below: `insp-${tag}-orders-dlt`,
    gone: `insp-${tag}-gone.DLT`,
  };
  const dlts = [t.vitals, t.short, t.compact, t.fewer, t.below, t.gone];
  // Configured, not discovered: the shared broker holds other runs' DLTs.
  const adapter = new KafkaAdapter(
    testConfig({ id: `insp-${tag}`, discover: false, dlqs: dlts.map((name) => ({ name })) }),
    { allManagedHeaders: MANAGED_HEADERS, handledStore: null },
  );
  const ordered = new KafkaAdapter(
    testConfig({ id: `insp-o-${tag}`, discover: false, dlqs: [{ name: t.fewer, ordered: true }] }),
    { allManagedHeaders: MANAGED_HEADERS, handledStore: null },
  );
  const adapters = [adapter, ordered];

  const inspect = (a: KafkaAdapter = adapter) => a.inspect({ minRetentionMs: MIN_RETENTION });
  const vitals = (r: BrokerInspection, name: string): DlqVitals | undefined => r.dlqs.find((d) => d.name === name);
  const findings = (r: BrokerInspection, topic: string): ConfigFinding[] =>
    r.findings.filter((f) => f.object === `topic ${topic}`);
  const codes = (r: BrokerInspection, topic: string) => findings(r, topic).map((f) => `${f.code}:${f.severity}`);
  /** Config changes reach every broker's metadata a moment after the controller took them. */
  async function until(check: (r: BrokerInspection) => boolean, a: KafkaAdapter = adapter): Promise<BrokerInspection> {
    let r = await inspect(a);
    for (let i = 0; i < 50 && !check(r); i++) {
      await new Promise((res) => setTimeout(res, 200));
      r = await inspect(a);
    }
    return r;
  }
  async function groupsOnDlts(before: string[]): Promise<string[]> {
    const admin = await kit.getAdmin();
    const fresh = (await admin.listGroups()).groups
      .filter((g) => !before.includes(g.groupId) && g.protocolType === "consumer")
      .map((g) => g.groupId);
    if (fresh.length === 0) return [];
    const ours: string[] = [];
    for (const g of (await admin.describeGroups(fresh)).groups) {
      const assigned = g.members.flatMap((m) =>
        Object.keys(AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment ?? {}),
      );
      const committed = (await admin.fetchOffsets({ groupId: g.groupId, topics: dlts })).filter((t) =>
        t.partitions.some((p) => p.offset !== "-1"),
      );
      if (assigned.some((t) => dlts.includes(t)) || committed.length > 0) ours.push(g.groupId);
    }
    return ours;
  }
  const alter = async (topic: string, entries: Record<string, string>) =>
    (await kit.getAdmin()).alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic,
          configEntries: Object.entries(entries).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  const produceAt = async (topic: string, records: Array<{ partition: number; at: number }>) => {
    const producer = await kit.getProducer();
    for (const r of records)
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { partition: r.partition, key: `k-${r.partition}`, value: `letter at ${r.at}`, timestamp: String(r.at) },
        ],
      });
  };

  beforeAll(async () => {
    const keep = (days: number) => ({ "retention.ms": String(days * DAY) });
    await kit.createTopic(t.vitals, 2, keep(30));
    await kit.createTopic(t.short, 1, keep(2));
    await kit.createTopic(t.compact, 1, { ...keep(14), "cleanup.policy": "compact" });
    await kit.createTopic(t.origin, 3, keep(14));
    await kit.createTopic(t.fewer, 1, keep(14));
    await kit.createTopic(t.below, 3, keep(8));
    await kit.createTopic(t.gone, 1, keep(14));
  });
  afterAll(async () => {
    await Promise.all(adapters.map((a) => a.close()));
    await kit.cleanup();
  });

  // P0 holds the oldest letters; P1's are all younger than any of P0's.
  const base = Date.now() - 2 * DAY;
  const p0 = [0, 1, 2, 3].map((i) => base + i * 60_000);
  const p1 = [0, 1].map((i) => base + 10 * 60_000 + i * 60_000);

  it("vitals: depth, the entered counter, the oldest letter's timestamp and retention; deleted records move them", async () => {
    await produceAt(t.vitals, [...p0.map((at) => ({ partition: 0, at })), ...p1.map((at) => ({ partition: 1, at }))]);
    const groupsBefore = (await (await kit.getAdmin()).listGroups()).groups.map((g) => g.groupId);

    const r = await inspect();
    expect(r.dlqs.map((d) => d.name)).toEqual([...dlts].sort());
    expect(vitals(r, t.vitals)).toEqual({
      name: t.vitals,
      queueType: "topic",
      depth: 6,
      inFlight: null,
      enteredTotal: 6,
      oldestAt: new Date(p0[0]).toISOString(),
      retentionMs: 30 * DAY,
      retentionClock: "arrival",
    });
    expect(vitals(r, t.fewer)).toMatchObject({ depth: 0, enteredTotal: 0, oldestAt: null, retentionMs: 14 * DAY });
    expect(findings(r, t.vitals)).toEqual([]);
    // Six DLTs, one broker: Metadata, ListOffsets twice, one Fetch for the two non-empty partitions, DescribeConfigs.
    expect(r.calls).toBe(5);
    // The same DLQs as listDlqs, and no consumer group was made.
    expect(r.dlqs.map((d) => d.name)).toEqual((await adapter.listDlqs()).map((d) => d.name));
    // Other test files make groups on the same broker meanwhile: a group the look made would be one
    // that holds a member assigned, or an offset committed, on one of this test's DLTs.
    expect(await groupsOnDlts(groupsBefore)).toEqual([]);

    const admin = await kit.getAdmin();
    await admin.deleteTopicRecords({ topic: t.vitals, partitions: [{ partition: 0, offset: "2" }] });
    const afterTwo = await inspect();
    expect(vitals(afterTwo, t.vitals)).toMatchObject({
      depth: 4,
      enteredTotal: 6,
      oldestAt: new Date(p0[2]).toISOString(),
    });

    await admin.deleteTopicRecords({ topic: t.vitals, partitions: [{ partition: 0, offset: "4" }] });
    expect(vitals(await inspect(), t.vitals)).toMatchObject({
      depth: 2,
      enteredTotal: 6,
      oldestAt: new Date(p1[0]).toISOString(),
    });

    await alter(t.vitals, { "retention.ms": "-1" });
    expect(vitals(await until((x) => vitals(x, t.vitals)?.retentionMs === null), t.vitals)?.retentionMs).toBeNull();
  });

  it("kafka.retention_short: a DLT keeping letters for less than the minimum, critical below a day; gone once raised", async () => {
    const r = await inspect();
    expect(codes(r, t.short)).toEqual(["kafka.retention_short:warning"]);
    const [f] = findings(r, t.short);
    expect(f.dlq).toBe(t.short);
    expect(f.why).toContain(`keeps letters for 2 days (retention.ms=${2 * DAY})`);
    expect(f.why).toContain("at least 7 days");
    expect(f.fix).toContain(`--entity-name ${t.short} --add-config retention.ms=${MIN_RETENTION}`);

    await alter(t.short, { "retention.ms": String(12 * 3_600_000) });
    const half = await until((x) => codes(x, t.short).includes("kafka.retention_short:critical"));
    expect(codes(half, t.short)).toEqual(["kafka.retention_short:critical"]);
    expect(findings(half, t.short)[0].why).toContain("keeps letters for 12 hours");

    await alter(t.short, { "retention.ms": String(14 * DAY) });
    const fixed = await until((x) => findings(x, t.short).length === 0);
    expect(findings(fixed, t.short)).toEqual([]);
    expect(vitals(fixed, t.short)?.retentionMs).toBe(14 * DAY);
  });

  it("kafka.compacted: a compacted DLT is critical; gone with cleanup.policy=delete", async () => {
    const r = await inspect();
    expect(codes(r, t.compact)).toEqual(["kafka.compacted:critical"]);
    expect(findings(r, t.compact)[0].why).toContain("cleanup.policy=compact");
    // Compact-only: retention.ms deletes nothing.
    expect(vitals(r, t.compact)?.retentionMs).toBeNull();

    await alter(t.compact, { "cleanup.policy": "delete", "retention.ms": String(14 * DAY) });
    const fixed = await until((x) => findings(x, t.compact).length === 0);
    expect(findings(fixed, t.compact)).toEqual([]);
    expect(vitals(fixed, t.compact)?.retentionMs).toBe(14 * DAY);
  });

  it("kafka.fewer_partitions: info, a warning where the DLQ is ordered; gone once the DLT has the origin's partitions", async () => {
    const [r, o] = [await inspect(), await inspect(ordered)];
    expect(codes(r, t.fewer)).toEqual(["kafka.fewer_partitions:info"]);
    expect(findings(r, t.fewer)[0].why).toContain(`has 1 partition, its origin ${t.origin} has 3`);
    expect(findings(r, t.fewer)[0].fix).toContain(`--alter --topic ${t.fewer} --partitions 3`);
    expect(codes(o, t.fewer)).toEqual(["kafka.fewer_partitions:warning"]);

    await (await kit.getAdmin()).createPartitions({ topicPartitions: [{ topic: t.fewer, count: 3 }] });
    expect(findings(await until((x) => findings(x, t.fewer).length === 0), t.fewer)).toEqual([]);
    expect(findings(await until((x) => findings(x, t.fewer).length === 0, ordered), t.fewer)).toEqual([]);
  });

  it("kafka.retention_below_origin: a DLT keeping letters for less time than its origin keeps records; gone once equal", async () => {
    const r = await inspect();
    expect(codes(r, t.below)).toEqual(["kafka.retention_below_origin:warning"]);
    expect(findings(r, t.below)[0].why).toContain(`8 days, less than its origin ${t.origin} keeps records (14 days`);

    await alter(t.below, { "retention.ms": String(14 * DAY) });
    expect(findings(await until((x) => findings(x, t.below).length === 0), t.below)).toEqual([]);
  });

  it("discovers the DLTs listDlqs discovers", async () => {
    const discovering = new KafkaAdapter(
      testConfig({ id: `insp-d-${tag}`, discover: true, dltPatterns: [`insp-${tag}-*`] }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: null },
    );
    adapters.push(discovering);
    const r = await discovering.inspect({ minRetentionMs: MIN_RETENTION });
    const listed = (await discovering.listDlqs()).map((d) => d.name);
    expect(r.dlqs.map((d) => d.name)).toEqual(listed);
    expect(listed).toEqual(expect.arrayContaining(dlts));
  });

  it("a DLT deleted by someone else is missing from the next look, which still works", async () => {
    await produceAt(t.gone, [{ partition: 0, at: base }]);
    // Browsing puts the topic into the adapter's client metadata, as an operator's visit would.
    expect((await adapter.browse(t.gone, { offset: 0, limit: 10 })).letters).toHaveLength(1);
    expect(vitals(await inspect(), t.gone)).toMatchObject({ depth: 1, oldestAt: new Date(base).toISOString() });

    await (await kit.getAdmin()).deleteTopics({ topics: [t.gone], timeout: 10_000 });
    kit.topics.delete(t.gone);
    const r = await until((x) => vitals(x, t.gone)?.depth === null);
    expect(vitals(r, t.gone)).toEqual({
      name: t.gone,
      queueType: "topic",
      depth: null,
      inFlight: null,
      enteredTotal: null,
      oldestAt: null,
      retentionMs: null,
      retentionClock: "arrival",
    });
    expect(findings(r, t.gone)).toEqual([]);
    expect(vitals(r, t.vitals)).toMatchObject({ depth: 2, enteredTotal: 6 });
  });

  it("a broker that is down is unavailable:broker within seconds; an aborted look stops", async () => {
    const dead = new KafkaAdapter(testConfig({ brokers: ["127.0.0.1:1"] }), {
      allManagedHeaders: MANAGED_HEADERS,
      client: { connectionTimeoutMs: 1000, retries: 1 },
      handledStore: null,
    });
    adapters.push(dead);
    const t0 = Date.now();
    await expect(dead.inspect({ minRetentionMs: MIN_RETENTION })).rejects.toMatchObject({
      kind: "unreachable",
      code: "unavailable:broker",
    });
    expect(Date.now() - t0).toBeLessThan(10_000);
    await expect(adapter.inspect({ minRetentionMs: MIN_RETENTION, signal: AbortSignal.abort() })).rejects.toThrow(
      /abort/i,
    );
  });
});
