import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IHeaders } from "kafkajs";
import { displayText } from "@/lib/brokers/display";
import {
  flagStuckPartitions,
  readConsumerGroups,
  samplesOf,
  type GroupSample,
} from "@/lib/brokers/kafka/consumer-groups";
import type { ConsumerGroupsRound } from "@/lib/brokers/contract/consumer-groups";
import { CommittedOffsetMovedError, ConsumerGroupActiveError } from "@/lib/brokers/contract/consumer-groups";
import { SKIP_EXCEPTION_FQCN, openGroupClient, readRecordAt, skipToDlt } from "@/lib/brokers/kafka/consumer-group-skip";
import { startCrashLoopConsumer, type CrashLoopConsumer } from "@/lib/brokers/kafka/crash-loop-consumer";
import { KafkaKit, int32be, int64be, testConfig } from "@/lib/brokers/kafka/test-kit";
import { BrokerError } from "@/lib/brokers/contract/errors";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const prop = (l: { properties: { name: string; value: unknown }[] }, name: string) =>
  displayText(l.properties.find((p) => p.name === name)?.value as never);
const buf = (v: unknown) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v)));

describe("consumer groups on a real Kafka: a partition stuck behind one poison record", () => {
  const kit = new KafkaKit();
  let client: Awaited<ReturnType<typeof openGroupClient>>;
  const consumers: CrashLoopConsumer[] = [];
  const round = () => readConsumerGroups({ cluster: async () => client.cluster, mapError: client.mapError });
  const groupIn = (r: ConsumerGroupsRound, id: string) => r.groups.find((g) => g.groupId === id);
  const committedIn = (r: ConsumerGroupsRound, id: string, topic: string, partition: number) =>
    groupIn(r, id)?.partitions.find((p) => p.topic === topic && p.partition === partition)?.committed;
  /** Rounds until `done` holds for one (at most `ms`). */
  const roundUntil = async (done: (r: ConsumerGroupsRound) => boolean, ms = 20_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const r = await round();
      if (done(r)) return r;
      if (Date.now() > deadline)
        throw new Error(
          `condition not met after ${ms} ms: ${JSON.stringify(r.groups.map((g) => [g.groupId, g.state, g.partitions.map((p) => [p.topic, p.partition, String(p.committed), String(p.end)])]))}`,
        );
      await sleep(200);
    }
  };
  const start = async (
    groupId: string,
    topic: string,
    isPoison: Parameters<typeof startCrashLoopConsumer>[1]["isPoison"],
  ) => {
    const c = await startCrashLoopConsumer(kit.kafka, { groupId, topic, isPoison });
    consumers.push(c);
    return c;
  };

  beforeAll(async () => {
    client = await openGroupClient(testConfig());
  });
  afterAll(async () => {
    for (const c of consumers) await c.stop().catch(() => undefined);
    await client?.close();
    await kit.cleanup();
  });

  it("flags only the poisoned partition, refuses a skip while the group has members, copies the record to the DLT once it is empty, and the restarted consumer drains the partition", async () => {
    const topic = await kit.createTopic(kit.name("payments"), 3);
    const dlt = `${topic}.DLT`;
    kit.topics.add(dlt);
    const group = `${kit.prefix}-payments-app`;
    kit.groups.add(group);
    const producer = await kit.getProducer();
    const send = (
      partition: number,
      value: Buffer | string,
      extra: { key?: Buffer | string; headers?: IHeaders; timestamp?: string } = {},
    ) =>
      producer.send({
        topic,
        acks: -1,
        messages: [
          { partition, key: extra.key ?? `k-${partition}`, value, headers: extra.headers, timestamp: extra.timestamp },
        ],
      });

    // Phase 1: good records everywhere; the group commits them (partition 1 up to offset 2).
    for (let i = 0; i < 3; i++) for (const p of [0, 2]) await send(p, `ok ${p}/${i}`);
    for (let i = 0; i < 2; i++) await send(1, `ok 1/${i}`);
    const poisonKey = Buffer.from([0x00, 0xff, 0x10, 0x80]);
    const isPoison = (m: { key: Buffer | null }) => !!m.key && m.key.equals(poisonKey);
    const app = await start(group, topic, isPoison);
    await roundUntil(
      (r) =>
        committedIn(r, group, topic, 0) === 3n &&
        committedIn(r, group, topic, 1) === 2n &&
        committedIn(r, group, topic, 2) === 3n,
    );

    // Phase 2: the poison record at partition 1, offset 2, with binary key, value and headers, then good ones after it.
    const poison = {
      key: poisonKey,
      value: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x00, 0x01, 0xfe]),
      headers: {
        "content-type": Buffer.from("application/x-weird"),
        "trace-bin": Buffer.from([0xde, 0xad, 0xbe, 0xef]),
        dup: [Buffer.from("a"), Buffer.from("b")],
      } as IHeaders,
      timestamp: String(Date.now() - 90_000),
    };
    await send(1, poison.value, poison);
    for (let i = 3; i < 6; i++) await send(1, `ok 1/${i}`);

    // Sample while the other partitions keep moving.
    const samples: GroupSample[] = [];
    let flagged: ReturnType<typeof flagStuckPartitions> = [];
    let last: ConsumerGroupsRound | null = null;
    const deadline = Date.now() + 30_000;
    for (let n = 0; !flagged.length; n++) {
      if (Date.now() > deadline)
        throw new Error(
          `no partition flagged after 30 s: ${JSON.stringify(samples.slice(-6), (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`,
        );
      for (const p of [0, 2]) await send(p, `more ${p}/${n}`);
      last = await round();
      samples.push(...samplesOf(last).filter((s) => s.group === group));
      flagged = flagStuckPartitions(samples, { stuckAfterMs: 2000 });
      await sleep(300);
    }
    expect(flagged).toEqual([
      expect.objectContaining({ group, topic, partition: 1, committed: 2n, lag: 4n, groupWide: false }),
    ]);
    expect(flagged[0].stuckForMs).toBeGreaterThanOrEqual(2000);
    // The other partitions moved meanwhile: their committed offsets grew past phase 1.
    const ours = samples.filter((s) => s.partition !== 1);
    for (const p of [0, 2])
      expect(ours.filter((s) => s.partition === p).some((s) => s.committed !== null && s.committed > 3n)).toBe(true);
    expect(app.failures).toBeGreaterThan(0);

    // What the round shows of the group: one member, all three partitions assigned to it, the lag.
    const g = groupIn(last!, group)!;
    expect(g).toMatchObject({ protocolType: "consumer", state: "Stable", problem: null });
    expect(g.members).toHaveLength(1);
    expect(g.members[0].assignments).toEqual([{ topic, partitions: [0, 1, 2] }]);
    const p1 = g.partitions.find((p) => p.partition === 1)!;
    expect(p1).toMatchObject({ committed: 2n, end: 6n, lag: 4n, memberId: g.members[0].memberId });

    // The record the partition waits on, as a letter.
    const at = await readRecordAt(client, { topic, partition: 1, offset: 2n });
    if (at.kind !== "record") throw new Error(`expected a record, got ${at.kind}`);
    expect(at.offset).toBe(2n);
    expect(Buffer.from(at.letter.body).equals(poison.value)).toBe(true);
    expect(prop(at.letter, "offset")).toBe("2");

    // While the consumer runs: refused, naming the member.
    const member = g.members[0];
    const refused = await skipToDlt(client, {
      groupId: group,
      topic,
      partition: 1,
      expectedCommitted: 2n,
      reason: "bad currency code",
      createDlt: true,
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConsumerGroupActiveError);
    expect((refused as ConsumerGroupActiveError).members).toEqual([
      { memberId: member.memberId, clientId: member.clientId, host: member.host },
    ]);
    expect((refused as ConsumerGroupActiveError).userMessage).toContain(member.memberId);
    expect(await client.admin.listTopics()).not.toContain(dlt);

    // Scaled to zero: a stale look is refused, the right one copies and skips.
    await app.stop();
    await roundUntil((r) => groupIn(r, group)?.state === "Empty");
    await expect(
      skipToDlt(client, {
        groupId: group,
        topic,
        partition: 1,
        expectedCommitted: 1n,
        reason: "bad currency code",
        createDlt: true,
      }),
    ).rejects.toBeInstanceOf(CommittedOffsetMovedError);
    const res = await skipToDlt(client, {
      groupId: group,
      topic,
      partition: 1,
      expectedCommitted: 2n,
      reason: "bad currency code",
      createDlt: true,
    });
    expect(res).toMatchObject({
      groupId: group,
      topic,
      partition: 1,
      dlt,
      dltCreated: true,
      committedBefore: 2n,
      committedAfter: 3n,
    });
    expect(res.copies).toEqual([{ offset: 2n, dltPartition: 1, dltOffset: 0n }]);

    // The copy, byte for byte, with its origin in Spring's headers.
    const copy = await readRecordAt(client, { topic: dlt, partition: 1, offset: 0n });
    if (copy.kind !== "record") throw new Error(`expected the copy, got ${copy.kind}`);
    const r = copy.record;
    expect(Buffer.from(r.key!).equals(poison.key)).toBe(true);
    expect(Buffer.from(r.value!).equals(poison.value)).toBe(true);
    expect(r.timestamp).toBe(poison.timestamp);
    const h = r.headers as Record<string, unknown>;
    expect(buf(h["content-type"]).equals(Buffer.from("application/x-weird"))).toBe(true);
    expect(buf(h["trace-bin"]).equals(Buffer.from([0xde, 0xad, 0xbe, 0xef]))).toBe(true);
    expect((h.dup as Buffer[]).map((b) => b.toString())).toEqual(["a", "b"]);
    expect(buf(h["kafka_dlt-original-topic"]).toString()).toBe(topic);
    expect(buf(h["kafka_dlt-original-partition"]).equals(int32be(1))).toBe(true);
    expect(buf(h["kafka_dlt-original-offset"]).equals(int64be(2n))).toBe(true);
    expect(buf(h["kafka_dlt-original-timestamp"]).equals(int64be(BigInt(poison.timestamp)))).toBe(true);
    expect(buf(h["kafka_dlt-original-timestamp-type"]).toString()).toBe("CreateTime");
    expect(buf(h["kafka_dlt-original-consumer-group"]).toString()).toBe(group);
    expect(buf(h["kafka_dlt-exception-message"]).toString()).toBe("bad currency code");
    expect(buf(h["kafka_dlt-exception-fqcn"]).toString()).toBe(SKIP_EXCEPTION_FQCN);
    expect(Object.keys(h)).toHaveLength(11);
    // ... which the console's letter view reads as a dead letter with its origin.
    expect(copy.letter.failure).toMatchObject({
      exceptionClass: SKIP_EXCEPTION_FQCN,
      exceptionMessage: "bad currency code",
      originQueue: topic,
      deadLetteredAt: new Date(Number(poison.timestamp)).toISOString(),
    });
    expect(prop(copy.letter, "original partition")).toBe("1");
    expect(prop(copy.letter, "original offset")).toBe("2");
    expect(prop(copy.letter, "original consumer group")).toBe(group);

    const after = await round();
    expect(committedIn(after, group, topic, 1)).toBe(3n);

    // The restarted application drains the partition and never sees the poison record again.
    const again = await start(group, topic, isPoison);
    await again.until((c) => c.filter((x) => x.partition === 1).length === 3);
    expect(again.consumed.filter((x) => x.partition === 1).map((x) => [x.offset, x.value])).toEqual([
      ["3", "ok 1/3"],
      ["4", "ok 1/4"],
      ["5", "ok 1/5"],
    ]);
    await roundUntil((r) => committedIn(r, group, topic, 1) === 6n);
    expect(again.failures).toBe(0);
    await again.stop();
  });

  it("a skip up to an offset copies every skipped record, in order, before the committed offset moves; a missing DLT is not created unless allowed", async () => {
    const topic = await kit.createTopic(kit.name("invoices"), 3);
    const group = `${kit.prefix}-invoices-app`;
    kit.groups.add(group);
    const producer = await kit.getProducer();
    const send = (value: string) => producer.send({ topic, acks: -1, messages: [{ partition: 2, key: `inv`, value }] });
    await send("ok 0");
    const app = await start(group, topic, (m) => m.value?.toString().startsWith("bad") ?? false);
    await roundUntil((r) => committedIn(r, group, topic, 2) === 1n);
    for (const v of ["bad 1", "bad 2", "worse 3", "ok 4", "ok 5"]) await send(v);
    // The application fails on offset 1 (and would on 2): stuck at 1.
    await app.until(() => app.failures >= 2);
    await app.stop();
    await roundUntil((r) => groupIn(r, group)?.state === "Empty");
    expect(committedIn(await round(), group, topic, 2)).toBe(1n);

    const dlt = kit.name("invoices-dead");
    const missing = await skipToDlt(client, {
      groupId: group,
      topic,
      partition: 2,
      expectedCommitted: 1n,
      upToOffset: 3n,
      dlt,
      reason: "invoices 1-3 belong to a cancelled batch",
    }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(BrokerError);
    expect((missing as BrokerError).kind).toBe("not_found");
    expect(committedIn(await round(), group, topic, 2)).toBe(1n);

    // A DLT of one partition: copies of partition 2 go to its partition 0, in offset order.
    await kit.createTopic(dlt, 1);
    const res = await skipToDlt(client, {
      groupId: group,
      topic,
      partition: 2,
      expectedCommitted: 1n,
      upToOffset: 3n,
      dlt,
      reason: "invoices 1-3 belong to a cancelled batch",
    });
    expect(res).toMatchObject({ dlt, dltCreated: false, committedBefore: 1n, committedAfter: 4n });
    expect(res.copies).toEqual([
      { offset: 1n, dltPartition: 0, dltOffset: 0n },
      { offset: 2n, dltPartition: 0, dltOffset: 1n },
      { offset: 3n, dltPartition: 0, dltOffset: 2n },
    ]);
    for (const c of res.copies) {
      const got = await readRecordAt(client, { topic: dlt, partition: 0, offset: c.dltOffset });
      if (got.kind !== "record") throw new Error(`expected the copy of ${c.offset}, got ${got.kind}`);
      expect([
        Buffer.from(got.record.value!).toString(),
        prop(got.letter, "original offset"),
        prop(got.letter, "original partition"),
        got.letter.failure.exceptionMessage,
      ]).toEqual([
        ["bad 1", "bad 2", "worse 3"][Number(c.offset) - 1],
        c.offset.toString(),
        "2",
        "invoices 1-3 belong to a cancelled batch",
      ]);
    }
    expect(committedIn(await round(), group, topic, 2)).toBe(4n);

    const again = await start(group, topic, () => false);
    await again.until((c) => c.some((x) => x.partition === 2 && x.offset === "5"));
    expect(again.consumed.filter((x) => x.partition === 2).map((x) => x.value)).toEqual(["ok 4", "ok 5"]);
    await again.stop();
  });

  it("keeps a round at a constant number of requests whatever the number of groups", async () => {
    const topic = await kit.createTopic(kit.name("counted"), 2);
    await kit.produce(topic, [{ body: new TextEncoder().encode("x"), partition: 0 }]);
    const commitOnly = async (g: string) => {
      kit.groups.add(g);
      // A group that only stores offsets (protocol type ""), as tools and assign()-consumers make.
      const coord = await (
        client.cluster as unknown as {
          findGroupCoordinator(a: { groupId: string }): Promise<{ offsetCommit(r: unknown): Promise<unknown> }>;
        }
      ).findGroupCoordinator({ groupId: g });
      await coord.offsetCommit({
        groupId: g,
        groupGenerationId: -1,
        memberId: "",
        topics: [{ topic, partitions: [{ partition: 0, offset: "0" }] }],
      });
    };
    await commitOnly(`${kit.prefix}-counted-0`);
    const before = await round();
    for (let i = 1; i < 6; i++) await commitOnly(`${kit.prefix}-counted-${i}`);
    const after = await round();
    const ours = after.groups.filter((g) => g.groupId.startsWith(`${kit.prefix}-counted-`));
    expect(ours).toHaveLength(6);
    for (const g of ours)
      expect(g.partitions).toEqual([
        { topic, partition: 0, committed: 0n, start: 0n, end: 1n, lag: 1n, memberId: null },
      ]);
    expect(after.groups.length).toBeGreaterThanOrEqual(before.groups.length + 5);
    // One broker here: 1 Metadata + 1 ListGroups + 1 DescribeGroups + 1 OffsetFetch + 2 ListOffsets.
    expect(after.calls).toBe(6);
    expect(before.calls).toBe(6);
    expect(after.brokersNotListed).toEqual([]);
  });
});
