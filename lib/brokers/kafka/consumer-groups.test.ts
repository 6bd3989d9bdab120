import { describe, expect, it } from "vitest";
import { AssignerProtocol, type Message } from "kafkajs";
import {
  DEFAULT_STUCK_AFTER_MS,
  decodeAssignment,
  flagStuckPartitions,
  type GroupSample,
} from "@/lib/brokers/kafka/consumer-groups";
import {
  decodeOffsetFetchResponse,
  encodeOffsetFetchRequest,
  supportsBatchedOffsetFetch,
} from "@/lib/brokers/kafka/offset-fetch";
import { CommittedOffsetMovedError, ConsumerGroupActiveError } from "@/lib/brokers/contract/consumer-groups";
import {
  NullHeader,
  SKIP_EXCEPTION_FQCN,
  dltCopyOf,
  skipToDlt,
  type GroupClientDeps,
} from "@/lib/brokers/kafka/consumer-group-skip";
import type { InternalRecord } from "@/lib/brokers/kafka/client";
import { mapKafkaError } from "@/lib/brokers/kafka/errors";
import { BrokerError } from "@/lib/brokers/contract/errors";

// Records are stamped relative to T0, and skips run on a clock injected one minute after it, so no
// assertion depends on the day the suite runs.
const T0 = Date.parse("2026-12-02T10:00:00Z");
const NOW = T0 + 60_000;
const s = (
  partition: number,
  committed: bigint | null,
  end: bigint,
  atSec: number,
  over: Partial<GroupSample> = {},
): GroupSample => ({
  group: "billing",
  topic: "payments",
  partition,
  committed,
  end,
  sampledAt: T0 + atSec * 1000,
  ...over,
});

describe("flagStuckPartitions", () => {
  it("flags the partition whose committed offset stood still with lag for the whole time, not the ones that moved", () => {
    const samples = [0, 60, 120, 180, 240, 300].flatMap((t, i) => [
      s(0, BigInt(10 + i), BigInt(12 + i), t),
      s(1, 7n, BigInt(9 + i), t),
      s(2, BigInt(3 + i), BigInt(3 + i), t),
    ]);
    expect(flagStuckPartitions(samples)).toEqual([
      {
        group: "billing",
        topic: "payments",
        partition: 1,
        committed: 7n,
        end: 14n,
        lag: 7n,
        since: new Date(T0),
        stuckForMs: 300_000,
        groupWide: false,
      },
    ]);
  });

  it("needs at least stuckAfterMs (default 5 minutes) between the first and the latest sample of the run", () => {
    expect(DEFAULT_STUCK_AFTER_MS).toBe(300_000);
    const samples = [s(1, 7n, 9n, 0), s(1, 7n, 9n, 299)];
    expect(flagStuckPartitions(samples)).toEqual([]);
    expect(flagStuckPartitions([...samples, s(1, 7n, 9n, 300)])).toHaveLength(1);
    expect(flagStuckPartitions(samples, { stuckAfterMs: 299_000 })).toHaveLength(1);
  });

  it("counts from the last move of the committed offset, forwards or back", () => {
    const forward = [s(1, 5n, 9n, 0), s(1, 6n, 9n, 100), s(1, 6n, 9n, 200), s(1, 6n, 9n, 400)];
    expect(flagStuckPartitions(forward, { stuckAfterMs: 300_000 })).toEqual([
      expect.objectContaining({ committed: 6n, since: new Date(T0 + 100_000), stuckForMs: 300_000 }),
    ]);
    const reset = [s(1, 6n, 9n, 0), s(1, 2n, 9n, 100), s(1, 2n, 9n, 200)];
    expect(flagStuckPartitions(reset, { stuckAfterMs: 150_000 })).toEqual([]);
  });

  it("starts again after a sample without lag: a caught-up idle group is not stuck, a poison record arriving later counts from when the lag appeared", () => {
    const idle = [s(1, 9n, 9n, 0), s(1, 9n, 9n, 400)];
    expect(flagStuckPartitions(idle)).toEqual([]);
    const later = [s(1, 9n, 9n, 0), s(1, 9n, 9n, 100), s(1, 9n, 10n, 200), s(1, 9n, 12n, 500)];
    expect(flagStuckPartitions(later)).toEqual([
      expect.objectContaining({ since: new Date(T0 + 200_000), stuckForMs: 300_000, lag: 3n }),
    ]);
    expect(flagStuckPartitions([...later, s(1, 9n, 9n, 600)])).toEqual([]);
  });

  it("flags a partition without committed offset but with lag from its first sample; its lag counts from the log start", () => {
    const never = [s(1, null, 4n, 0, { start: 1n }), s(1, null, 4n, 300, { start: 1n })];
    expect(flagStuckPartitions(never)).toEqual([
      expect.objectContaining({ partition: 1, committed: null, lag: 3n, since: new Date(T0) }),
    ]);
    expect(flagStuckPartitions([s(1, null, 4n, 0, { start: 4n }), s(1, null, 4n, 300, { start: 4n })])).toEqual([]);
    // Without a log start the lag counts from offset 0.
    expect(flagStuckPartitions([s(1, null, 4n, 0), s(1, null, 4n, 300)])).toEqual([
      expect.objectContaining({ lag: 4n }),
    ]);
  });

  it("takes samples in any order and keeps groups and topics apart; says when the whole group is stuck", () => {
    const a = [s(0, 1n, 5n, 300), s(1, 2n, 5n, 0), s(0, 1n, 5n, 0), s(1, 2n, 5n, 300)];
    const b = [
      s(0, 1n, 5n, 0, { group: "audit" }),
      s(0, 2n, 5n, 300, { group: "audit" }),
      s(0, 1n, 5n, 0, { topic: "refunds" }),
      s(0, 1n, 5n, 300, { topic: "refunds" }),
    ];
    const flagged = flagStuckPartitions([...a, ...b]);
    expect(flagged.map((f) => [f.group, f.topic, f.partition, f.groupWide])).toEqual([
      ["billing", "payments", 0, true],
      ["billing", "payments", 1, true],
      ["billing", "refunds", 0, true],
    ]);
    // One partition of three lagging is stuck, another lagging one moves: not group-wide.
    const one = [s(0, 1n, 5n, 0), s(0, 1n, 5n, 300), s(1, 1n, 5n, 0), s(1, 3n, 5n, 300)];
    expect(flagStuckPartitions(one)).toEqual([expect.objectContaining({ partition: 0, groupWide: false })]);
  });
});

describe("OffsetFetch v8 (many groups in one request)", () => {
  it("asks for every committed offset of each group (topics null) in the flexible encoding", () => {
    expect([...encodeOffsetFetchRequest(["g1", "ab"])]).toEqual([0, 3, 3, 0x67, 0x31, 0, 0, 3, 0x61, 0x62, 0, 0, 0, 0]);
  });

  it("decodes groups, topics and partitions, a missing offset as null, and group errors", () => {
    const bytes = Buffer.from([
      0, // response header tags
      0,
      0,
      0,
      0, // throttle
      3, // 2 groups
      2,
      0x67, // "g"
      2, // 1 topic
      2,
      0x74, // "t"
      3, // 2 partitions
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      5,
      0xff,
      0xff,
      0xff,
      0xff,
      1,
      0,
      0,
      0, // p0 offset 5, epoch -1, metadata "", no error, tags
      0,
      0,
      0,
      1,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0xff,
      0,
      0,
      0,
      4,
      0,
      0,
      0x58,
      0, // p1 offset -1, metadata null, error 88
      0, // topic tags
      0,
      0,
      0, // group error 0, tags
      2,
      0x68, // "h"
      1, // no topics
      0,
      16,
      0, // NOT_COORDINATOR, tags
      0, // tags
    ]);
    expect(decodeOffsetFetchResponse(bytes)).toEqual([
      {
        groupId: "g",
        errorCode: 0,
        offsets: [
          { topic: "t", partition: 0, offset: 5n, errorCode: 0 },
          { topic: "t", partition: 1, offset: null, errorCode: 88 },
        ],
      },
      { groupId: "h", errorCode: 16, offsets: [] },
    ]);
    expect(() => decodeOffsetFetchResponse(bytes.subarray(0, 20))).toThrow();
  });

  it("is used only where the broker speaks v8 (Kafka 3.0+)", () => {
    expect(supportsBatchedOffsetFetch({ versions: { 9: { minVersion: 1, maxVersion: 9 } } })).toBe(true);
    expect(supportsBatchedOffsetFetch({ versions: { 9: { minVersion: 0, maxVersion: 7 } } })).toBe(false);
    expect(supportsBatchedOffsetFetch({ versions: null })).toBe(false);
  });
});

describe("decodeAssignment", () => {
  it("reads the consumer protocol's assignment, topics and partitions sorted; anything else is no assignment", () => {
    const bytes = AssignerProtocol.MemberAssignment.encode({
      version: 3,
      assignment: { orders: [2, 0], audit: [1] },
      userData: Buffer.from([1, 2]),
    });
    expect(decodeAssignment(bytes)).toEqual([
      { topic: "audit", partitions: [1] },
      { topic: "orders", partitions: [0, 2] },
    ]);
    expect(decodeAssignment(null)).toEqual([]);
    expect(decodeAssignment(Buffer.alloc(0))).toEqual([]);
    expect(decodeAssignment(Buffer.from([0, 0, 0, 0, 0, 9]))).toEqual([]);
  });
});

const rec = (offset: number, over: Partial<InternalRecord> = {}): InternalRecord => ({
  offset: String(offset),
  timestamp: String(T0 + offset),
  key: Buffer.from(`k${offset}`),
  value: Buffer.from(`v${offset}`),
  headers: { trace: Buffer.from(`t${offset}`) },
  batchContext: { producerId: "-1", inTransaction: false, timestampType: 0 },
  ...over,
});

describe("dltCopyOf", () => {
  it("keeps key, value, timestamp and headers (in order, repeated ones too) and adds Spring's kafka_dlt-* headers", () => {
    const r = rec(42, {
      key: null,
      headers: { a: Buffer.from([0xff]), dup: [Buffer.from("1"), Buffer.from("2")] },
      batchContext: { producerId: "-1", inTransaction: false, timestampType: 1 },
    });
    const m = dltCopyOf(r, { topic: "payments", partition: 7, groupId: "billing", reason: "bad currency" });
    expect(m.key).toBeNull();
    expect(m.value).toEqual(Buffer.from("v42"));
    expect(m.timestamp).toBe(String(T0 + 42));
    const h = m.headers as Record<string, Buffer | Buffer[]>;
    expect(Object.keys(h)).toEqual([
      "a",
      "dup",
      "kafka_dlt-original-topic",
      "kafka_dlt-original-partition",
      "kafka_dlt-original-offset",
      "kafka_dlt-original-timestamp",
      "kafka_dlt-original-timestamp-type",
      "kafka_dlt-original-consumer-group",
      "kafka_dlt-exception-fqcn",
      "kafka_dlt-exception-message",
    ]);
    expect(h.a).toEqual(Buffer.from([0xff]));
    expect(h.dup).toEqual([Buffer.from("1"), Buffer.from("2")]);
    expect(h["kafka_dlt-original-partition"]).toEqual(Buffer.from([0, 0, 0, 7]));
    expect(h["kafka_dlt-original-offset"]).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 42]));
    expect((h["kafka_dlt-original-timestamp"] as Buffer).readBigInt64BE()).toBe(BigInt(T0 + 42));
    expect(String(h["kafka_dlt-original-timestamp-type"])).toBe("LogAppendTime");
    expect(String(h["kafka_dlt-exception-fqcn"])).toBe(SKIP_EXCEPTION_FQCN);
    expect(String(h["kafka_dlt-exception-message"])).toBe("bad currency");
  });

  it("replaces an earlier dead-lettering's headers of the same names (this one's origin shows) and refuses a header without value", () => {
    const r = rec(3, {
      headers: {
        "kafka_dlt-original-offset": Buffer.from([0, 0, 0, 0, 0, 0, 0, 9]),
        "kafka_dlt-exception-stacktrace": Buffer.from("old"),
      },
    });
    const h = dltCopyOf(r, { topic: "t", partition: 0, groupId: "g", reason: "x" }).headers as Record<string, Buffer>;
    expect(h["kafka_dlt-original-offset"]).toEqual(Buffer.from([0, 0, 0, 0, 0, 0, 0, 3]));
    expect(String(h["kafka_dlt-exception-stacktrace"])).toBe("old");
    expect(() =>
      dltCopyOf(rec(4, { headers: { gone: null } }), { topic: "t", partition: 0, groupId: "g", reason: "x" }),
    ).toThrow(NullHeader);
  });
});

/** A fake cluster, admin and producer around one source partition (payments/1) and a log of calls. */
function fakeKafka(opts: {
  records: InternalRecord[];
  committed: bigint | null;
  start?: bigint;
  end: bigint;
  dltPartitions?: number | null;
  dltConfig?: Record<string, string>;
}) {
  const calls: string[] = [];
  const state = {
    members: [] as Array<{ memberId: string; clientId: string; clientHost: string }>,
    committed: opts.committed,
    dltPartitions: opts.dltPartitions === undefined ? 3 : opts.dltPartitions,
    commitError: null as Error | null,
  };
  const hooks = {
    onProduce: (_n: number) => undefined as void | Promise<void>,
    produceError: null as ((n: number) => Error | null) | null,
  };
  let produced = 0;
  const cluster = {
    targetTopics: new Set<string>(),
    addTargetTopic: async (t: string) => void cluster.targetTopics.add(t),
    refreshMetadata: async () => undefined,
    refreshMetadataIfNecessary: async () => undefined,
    findTopicPartitionMetadata: () => [0, 1, 2].map((partitionId) => ({ partitionId, leader: 1 })),
    fetchTopicsOffset: async ([q]: Array<{ topic: string; fromBeginning: boolean }>) => [
      {
        topic: q.topic,
        partitions: [{ partition: 1, offset: String(q.fromBeginning ? (opts.start ?? 0n) : opts.end) }],
      },
    ],
    findLeaderForPartitions: () => ({ "1": [1] }),
    findBroker: async () => ({
      fetch: async (req: { topics: Array<{ partitions: Array<{ fetchOffset: string }> }> }) => {
        const from = BigInt(req.topics[0].partitions[0].fetchOffset);
        return {
          responses: [
            {
              topicName: "payments",
              partitions: [
                {
                  partition: 1,
                  errorCode: 0,
                  highWatermark: String(opts.end),
                  messages: opts.records.filter((r) => BigInt(r.offset) >= from),
                },
              ],
            },
          ],
        };
      },
    }),
    findGroupCoordinator: async () => ({
      offsetCommit: async (req: { topics: Array<{ partitions: Array<{ offset: string }> }> }) => {
        calls.push(`commit ${req.topics[0].partitions[0].offset}`);
        if (state.commitError) throw state.commitError;
        state.committed = BigInt(req.topics[0].partitions[0].offset);
      },
    }),
  };
  const admin = {
    describeGroups: async () => {
      calls.push("describe");
      return {
        groups: [
          {
            groupId: "billing",
            protocolType: "consumer",
            state: state.members.length ? "Stable" : "Empty",
            members: state.members,
          },
        ],
      };
    },
    fetchOffsets: async () => {
      calls.push("offsets");
      return [
        {
          topic: "payments",
          partitions: [{ partition: 1, offset: state.committed === null ? "-1" : String(state.committed) }],
        },
      ];
    },
    fetchTopicMetadata: async () => ({
      topics:
        state.dltPartitions === null
          ? []
          : [
              {
                name: "payments.DLT",
                partitions: Array.from({ length: state.dltPartitions }, (_, i) => ({ partitionId: i, leader: 0 })),
              },
            ],
    }),
    createTopics: async () => {
      calls.push("create");
      state.dltPartitions = 3;
      return true;
    },
    listTopics: async () => ["payments"],
    describeConfigs: async () => ({
      resources: [
        {
          resourceName: "payments.DLT",
          configEntries: Object.entries({
            "retention.ms": "604800000",
            "message.timestamp.type": "CreateTime",
            ...opts.dltConfig,
          }).map(([configName, configValue]) => ({ configName, configValue })),
        },
      ],
    }),
  };
  const deps: GroupClientDeps = {
    cluster: cluster as unknown as GroupClientDeps["cluster"],
    admin: admin as unknown as GroupClientDeps["admin"],
    mapError: (e, topic) => mapKafkaError(e, { endpoint: "fake:9092", topic, connection: "fake" }),
    now: () => NOW,
    async produce(topic: string, m: Message) {
      const n = produced++;
      const err = hooks.produceError?.(n);
      if (err) throw err;
      calls.push(`produce ${topic}/${m.partition} ${String(m.value)}`);
      await hooks.onProduce(n);
      return { partition: m.partition!, offset: String(100 + n) };
    },
  };
  return { deps, calls, state, hooks };
}

const skip = { groupId: "billing", topic: "payments", partition: 1, reason: "bad currency" };

describe("skipToDlt (order and refusals, on fakes)", () => {
  it("copies every record up to upToOffset, each confirmed, before it checks the group again and commits upToOffset + 1", async () => {
    const k = fakeKafka({ records: [rec(4), rec(5), rec(6), rec(7)], committed: 4n, end: 8n });
    const res = await skipToDlt(k.deps, { ...skip, expectedCommitted: 4n, upToOffset: 6n });
    expect(k.calls).toEqual([
      "describe",
      "offsets",
      "produce payments.DLT/1 v4",
      "produce payments.DLT/1 v5",
      "produce payments.DLT/1 v6",
      "describe",
      "offsets",
      "commit 7",
      "offsets",
    ]);
    expect(res).toEqual({
      groupId: "billing",
      topic: "payments",
      partition: 1,
      dlt: "payments.DLT",
      dltCreated: false,
      committedBefore: 4n,
      committedAfter: 7n,
      copies: [
        { offset: 4n, dltPartition: 1, dltOffset: 100n },
        { offset: 5n, dltPartition: 1, dltOffset: 101n },
        { offset: 6n, dltPartition: 1, dltOffset: 102n },
      ],
    });
  });

  it("by default skips the one record the group waits on; without committed offset that is the log start", async () => {
    const k = fakeKafka({ records: [rec(2), rec(3)], committed: null, start: 2n, end: 4n });
    const res = await skipToDlt(k.deps, { ...skip, expectedCommitted: null });
    expect(res.copies.map((c) => c.offset)).toEqual([2n]);
    expect(res).toMatchObject({ committedBefore: null, committedAfter: 3n });
  });

  it("refuses while the group has members, naming them, before anything is copied", async () => {
    const k = fakeKafka({ records: [rec(4)], committed: 4n, end: 5n });
    k.state.members = [{ memberId: "app-1-3f2a", clientId: "payments-app", clientHost: "/10.0.0.7" }];
    const e = await skipToDlt(k.deps, { ...skip, expectedCommitted: 4n }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConsumerGroupActiveError);
    expect((e as ConsumerGroupActiveError).code).toBe("conflict:consumer-group");
    expect((e as ConsumerGroupActiveError).userMessage).toContain("payments-app (app-1-3f2a) on /10.0.0.7");
    expect(k.calls).toEqual(["describe"]);
  });

  it("refuses when the committed offset is not the one the operator saw", async () => {
    const k = fakeKafka({ records: [rec(4)], committed: 5n, end: 6n });
    await expect(skipToDlt(k.deps, { ...skip, expectedCommitted: 4n })).rejects.toBeInstanceOf(
      CommittedOffsetMovedError,
    );
    expect(k.calls.some((c) => c.startsWith("produce") || c.startsWith("commit"))).toBe(false);
  });

  it("does not commit when a member joined or the offset moved while the copies were made, and says the copies exist", async () => {
    const joined = fakeKafka({ records: [rec(4), rec(5)], committed: 4n, end: 6n });
    joined.hooks.onProduce = () => {
      joined.state.members = [{ memberId: "m-2", clientId: "payments-app", clientHost: "/10.0.0.8" }];
    };
    const e1 = await skipToDlt(joined.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n }).catch(
      (x: unknown) => x,
    );
    expect(e1).toBeInstanceOf(ConsumerGroupActiveError);
    expect((e1 as ConsumerGroupActiveError).details?.copies).toHaveLength(2);
    expect((e1 as ConsumerGroupActiveError).userMessage).toContain("2 records were already copied");
    expect(joined.calls.some((c) => c.startsWith("commit"))).toBe(false);

    const moved = fakeKafka({ records: [rec(4)], committed: 4n, end: 6n });
    moved.hooks.onProduce = () => {
      moved.state.committed = 5n;
    };
    await expect(skipToDlt(moved.deps, { ...skip, expectedCommitted: 4n })).rejects.toBeInstanceOf(
      CommittedOffsetMovedError,
    );
    expect(moved.calls.some((c) => c.startsWith("commit"))).toBe(false);
  });

  it("leaves the offset where it was when a copy is not confirmed", async () => {
    const k = fakeKafka({ records: [rec(4), rec(5)], committed: 4n, end: 6n });
    k.hooks.produceError = (n) =>
      n === 1
        ? Object.assign(new Error("Message too large"), { name: "KafkaJSProtocolError", type: "MESSAGE_TOO_LARGE" })
        : null;
    const e = await skipToDlt(k.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BrokerError);
    expect((e as BrokerError).userMessage).toContain(
      "The committed offset was not changed. 1 record was already copied",
    );
    expect(k.calls.some((c) => c.startsWith("commit"))).toBe(false);
    expect(k.state.committed).toBe(4n);
  });

  it("maps the broker's refusal of the commit (a member joined at the last moment) to ConsumerGroupActiveError", async () => {
    const k = fakeKafka({ records: [rec(4)], committed: 4n, end: 5n });
    k.state.commitError = Object.assign(new Error("The coordinator is not aware of this member"), {
      name: "KafkaJSProtocolError",
      type: "UNKNOWN_MEMBER_ID",
    });
    await expect(skipToDlt(k.deps, { ...skip, expectedCommitted: 4n })).rejects.toBeInstanceOf(
      ConsumerGroupActiveError,
    );
    expect(k.state.committed).toBe(4n);
  });

  it("refuses before copying: a header without value anywhere in the range, a range outside the partition, a missing DLT unless allowed, no reason", async () => {
    const nul = fakeKafka({ records: [rec(4), rec(5, { headers: { x: null } })], committed: 4n, end: 6n });
    const e = await skipToDlt(nul.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n }).catch((x: unknown) => x);
    expect((e as BrokerError).userMessage).toContain('Record 5 of payments/1 has a header "x" without value');
    expect(nul.calls.some((c) => c.startsWith("produce"))).toBe(false);

    const out = fakeKafka({ records: [rec(4)], committed: 4n, end: 5n });
    await expect(skipToDlt(out.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n })).rejects.toMatchObject({
      kind: "bad_request",
    });
    await expect(skipToDlt(out.deps, { ...skip, expectedCommitted: 4n, reason: "  " })).rejects.toMatchObject({
      kind: "bad_request",
    });

    const noDlt = fakeKafka({ records: [rec(4)], committed: 4n, end: 5n, dltPartitions: null });
    await expect(skipToDlt(noDlt.deps, { ...skip, expectedCommitted: 4n })).rejects.toMatchObject({
      kind: "not_found",
    });
    expect(noDlt.calls.some((c) => c.startsWith("produce"))).toBe(false);
    const res = await skipToDlt(noDlt.deps, { ...skip, expectedCommitted: 4n, createDlt: true });
    expect(res.dltCreated).toBe(true);
    expect(noDlt.calls.indexOf("create")).toBeLessThan(noDlt.calls.findIndex((c) => c.startsWith("produce")));
  });

  it("refuses, before copying, when the DLT's retention would delete a copy (it keeps its old timestamp) within the hour", async () => {
    const old = [rec(4, { timestamp: String(NOW - 23.5 * 3600_000) }), rec(5)];
    const short = fakeKafka({
      records: old,
      committed: 4n,
      end: 6n,
      dltConfig: { "retention.ms": String(24 * 3600_000) },
    });
    const e = await skipToDlt(short.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n }).catch((x: unknown) => x);
    expect((e as BrokerError).kind).toBe("bad_request");
    expect((e as BrokerError).userMessage).toMatch(
      /Record 4 of payments\/1 is from .*keeps records for .*Nothing was copied/,
    );
    expect(short.calls.some((c) => c.startsWith("produce"))).toBe(false);
    // Enough time left, unlimited retention, or a DLT that stamps its own time: copied.
    for (const dltConfig of [
      { "retention.ms": String(25 * 3600_000) } as Record<string, string>,
      { "retention.ms": "-1" },
      { "retention.ms": "1000", "message.timestamp.type": "LogAppendTime" },
    ]) {
      const k = fakeKafka({ records: old, committed: 4n, end: 6n, dltConfig });
      expect((await skipToDlt(k.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n })).copies).toHaveLength(2);
    }
  });

  it("puts all copies in one DLT partition: the same number when the DLT has it, else partition modulo its count", async () => {
    const k = fakeKafka({ records: [rec(4), rec(5)], committed: 4n, end: 6n, dltPartitions: 1 });
    const res = await skipToDlt(k.deps, { ...skip, expectedCommitted: 4n, upToOffset: 5n });
    expect(res.copies.map((c) => c.dltPartition)).toEqual([0, 0]);
  });
});
