import { describe, expect, it } from "vitest";
import type { ConsumerGroup, GroupPartition } from "@/lib/brokers/contract/consumer-groups";
import { memberLabel, nextSince, partitionKey, partitionWrites, stuckForMs, withLiveOffsets } from "./stuck";

const t0 = new Date("2026-12-02T10:00:00Z");
const t1 = new Date("2026-12-02T10:01:00Z");

describe("nextSince", () => {
  it("keeps the previous since while the committed offset stays put with lag", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 7n, lag: 5n }, t1)).toEqual(t0);
  });

  it("a partition that never committed, with lag in both samples, counts from its first sample", () => {
    expect(nextSince({ committed: null, lag: 3n, since: t0 }, { committed: null, lag: 4n }, t1)).toEqual(t0);
  });

  it("starts a new run when the committed offset moved, forwards or back", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 8n, lag: 2n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 5n, lag: 5n }, t1)).toEqual(t1);
    expect(nextSince({ committed: null, lag: 3n, since: t0 }, { committed: 0n, lag: 3n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 0n, lag: 3n, since: t0 }, { committed: null, lag: 3n }, t1)).toEqual(t1);
  });

  it("starts a new run after a sample without lag (caught up in between), or without a previous row", () => {
    expect(nextSince({ committed: 7n, lag: 0n, since: null }, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
    expect(nextSince(null, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
    expect(nextSince({ committed: 7n, lag: 2n, since: null }, { committed: 7n, lag: 1n }, t1)).toEqual(t1);
  });

  it("is null without lag", () => {
    expect(nextSince({ committed: 7n, lag: 3n, since: t0 }, { committed: 7n, lag: 0n }, t1)).toBeNull();
    expect(nextSince(null, { committed: 9n, lag: 0n }, t1)).toBeNull();
  });
});

describe("stuckForMs", () => {
  it("is the time since the run began once it reaches the threshold, else null", () => {
    expect(stuckForMs({ lag: 1n, since: t0 }, t1, 60_000)).toBe(60_000);
    expect(stuckForMs({ lag: 1n, since: t0 }, t1, 60_001)).toBeNull();
    expect(stuckForMs({ lag: 0n, since: t0 }, t1, 1)).toBeNull();
    expect(stuckForMs({ lag: 5n, since: null }, t1, 1)).toBeNull();
  });
});

describe("memberLabel", () => {
  it("is client id and host, without kafkajs's leading slash", () => {
    expect(memberLabel({ clientId: "payments", host: "/10.0.0.7" })).toBe("payments/10.0.0.7");
  });
});

describe("partitionWrites", () => {
  const part = (
    partition: number,
    committed: bigint | null,
    end: bigint | null,
    memberId: string | null = null,
  ): GroupPartition => ({
    topic: "orders",
    partition,
    committed,
    start: end === null ? null : 0n,
    end,
    lag: end === null ? null : end - (committed ?? 0n),
    memberId,
  });
  const group = (partitions: GroupPartition[], problem: string | null = null): ConsumerGroup => ({
    groupId: "billing",
    protocolType: "consumer",
    state: "Stable",
    protocol: "range",
    coordinator: 1,
    members: [
      {
        memberId: "m-1",
        clientId: "billing-app",
        host: "/10.0.0.9",
        assignments: [{ topic: "orders", partitions: [0, 1, 2] }],
      },
    ],
    partitions,
    problem,
  });
  const prev = new Map([[partitionKey("billing", "orders", 0), { committed: 5n, lag: 2n, since: t0 }]]);

  it("carries since per partition, labels the member, and keeps a partition whose log offsets are unknown without writing it", () => {
    const { writes, keep } = partitionWrites(
      group([part(0, 5n, 9n, "m-1"), part(1, 3n, 3n), part(2, 1n, null, "m-1")]),
      prev,
      t1,
    );
    expect(writes).toEqual([
      {
        group_id: "billing",
        topic: "orders",
        partition: 0,
        committed: "5",
        start_offset: "0",
        end_offset: "9",
        lag: "4",
        member: "billing-app/10.0.0.9",
        since: t0.toISOString(),
      },
      {
        group_id: "billing",
        topic: "orders",
        partition: 1,
        committed: "3",
        start_offset: "0",
        end_offset: "3",
        lag: "0",
        member: null,
        since: null,
      },
    ]);
    expect(keep).toEqual([0, 1, 2].map((partition) => ({ topic: "orders", partition })));
  });

  it("in a group read with a problem, writes no partition whose committed offset is unknown (its since is kept)", () => {
    const { writes } = partitionWrites(
      group([part(0, null, 9n), part(1, 3n, 8n)], "This round its committed offsets could not be read."),
      prev,
      t1,
    );
    expect(writes.map((w) => [w.partition, w.committed, w.since])).toEqual([[1, "3", t1.toISOString()]]);
  });
});

describe("withLiveOffsets", () => {
  const stored = {
    committed: 1n,
    start: 0n,
    end: 4n,
    lag: 3n,
    since: t0,
    stuck: true,
    stuckForMs: 60_000,
    topic: "orders",
  };
  const later = new Date(t0.getTime() + 10 * 60_000);

  it("after a skip moved the committed offset, shows the broker's offsets and lag and is no longer stuck", () => {
    const r = withLiveOffsets(stored, { committed: 2n, start: 0n, end: 4n, lag: 2n }, later, 8_000);
    expect(r).toMatchObject({ committed: 2n, lag: 2n, end: 4n, since: later, stuck: false, stuckForMs: null });
    expect(r.topic).toBe("orders");
  });

  it("caught up after the skip: no lag, no run", () => {
    expect(withLiveOffsets(stored, { committed: 4n, start: 0n, end: 4n, lag: 0n }, later, 8_000)).toMatchObject({
      since: null,
      stuck: false,
    });
  });

  it("still at the same offset: still stuck, for as long as the stored run says, with the live lag", () => {
    const r = withLiveOffsets(stored, { committed: 1n, start: 0n, end: 6n, lag: 5n }, later, 8_000);
    expect(r).toMatchObject({ since: t0, stuck: true, stuckForMs: 10 * 60_000, lag: 5n, end: 6n });
  });
});
