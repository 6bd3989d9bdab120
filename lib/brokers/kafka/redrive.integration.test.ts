/**
 * Redrive on a real Kafka: dead-letter topics are filled by the test kit's failing consumers (Spring
 * Kafka's headers), moved with `moveLetters`, and what arrives is read back with plain Fetches.
 * Needs Kafka (`bash scripts/services.sh start kafka`) and Postgres (DATABASE_URL, migrated).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { MoveRequest, MoveResult, RedriveTarget } from "@/lib/brokers/contract/move";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { createCluster, type InternalCluster, type InternalRecord } from "@/lib/brokers/kafka/client";
import type { HandledStore } from "@/lib/brokers/kafka/handled-store";
import { moveWords } from "@/lib/brokers/move-rules";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { KafkaKit, testConfig, type FailureSpec } from "@/lib/brokers/kafka/test-kit";
import {
  collectMoves,
  expectMissingReason,
  markersFor,
  runRedriveContract,
} from "@/lib/brokers/contract-suite/redrive";
import { contractFixtureWith, headerText, readTopic } from "@/lib/brokers/kafka/contract-fixture";
import { runRemoveContract } from "@/lib/brokers/contract-suite/remove";
import { closeDb } from "@/lib/db";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const FAIL: FailureSpec = { exceptionClass: "com.acme.orders.OutOfStockException", message: "sku out of stock" };

const headerBytes = (r: InternalRecord, name: string): Buffer[] => {
  const v = r.headers?.[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => Buffer.from(x as Buffer));
};

describe("Kafka moveLetters on a real broker", () => {
  const kit = new KafkaKit();
  const store = prismaHandledStore();
  const connectionId = `redrive-kafka-${randomUUID().slice(0, 8)}`;
  const adapter = new KafkaAdapter(testConfig({ id: connectionId }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  let cluster: InternalCluster;
  beforeAll(async () => {
    cluster = createCluster(kit.kafka);
    await cluster.connect();
  });
  afterAll(async () => {
    await adapter.close();
    await cluster?.disconnect();
    await kit.cleanup();
    await closeDb();
  });

  const browseAll = async (dlq: string, a: KafkaAdapter = adapter) =>
    (await a.browse(dlq, { offset: 0, limit: 1000 })).letters;
  const req = (
    l: Letter,
    target: RedriveTarget,
    job: string,
    over: Partial<MoveRequest["markers"]> = {},
  ): MoveRequest => ({ letterId: l.id, sha256: l.sha256, target, markers: { ...markersFor(job), ...over } });
  const move = (dlq: string, reqs: MoveRequest[], a: KafkaAdapter = adapter) => collectMoves(a.moveLetters(dlq, reqs));
  const arrivedOf = async (topic: string, job: string) =>
    (await readTopic(kit, cluster, topic)).filter((r) => headerText(r, REDRIVE_HEADERS.redriveId) === job);

  it("moves 2 of 5 to the original topic: same key, value and headers plus the markers; only those 2 offsets handled; again → missing", async () => {
    const bodies = [
      text("order-0"),
      Uint8Array.from([0x00, 0xff, 0xc3, 0x28]),
      text("order-2"),
      text('{"order":3}'),
      text("order-4"),
    ];
    const { source, dlt, group } = await kit.springDlt(
      bodies.map((body, i) => ({ body, key: `customer-${i}`, headers: { "x-app": `app-${i}` } })),
    );
    const before = await browseAll(dlt);
    expect(before).toHaveLength(5);
    const dltRecords = await readTopic(kit, cluster, dlt);
    const job = randomUUID();
    const chosen = [before[1], before[3]];
    const reqs = chosen.map((l) => req(l, { kind: "origin" }, job));
    const t0 = Date.now();
    const results = await move(dlt, reqs);
    expect(
      results.map((r) => [r.letterId, r.outcome, r.reason, r.destination, r.target, r.orderingKey]).sort(),
    ).toEqual([
      ["0-1", "moved", null, `topic ${source}`, source, "customer-1"],
      ["0-3", "moved", null, `topic ${source}`, source, "customer-3"],
    ]);

    const arrived = await arrivedOf(source, job);
    expect(arrived).toHaveLength(2);
    chosen.forEach((l, i) => {
      const a = arrived.find((r) => headerText(r, REDRIVE_HEADERS.replayId) === reqs[i].markers.replayId)!;
      const original = dltRecords[Number(l.id.split("-")[1])];
      expect(Buffer.from(a.key!).equals(Buffer.from(original.key!))).toBe(true);
      expect(Buffer.from(a.value!).equals(Buffer.from(bodies[i === 0 ? 1 : 3]))).toBe(true);
      // Every original header, byte for byte, Spring's kafka_dlt-* history included.
      for (const name of Object.keys(original.headers ?? {}))
        expect(headerBytes(a, name), name).toEqual(headerBytes(original, name));
      expect(headerText(a, "kafka_dlt-original-consumer-group")).toBe(group);
      expect(headerText(a, "x-app")).toBe(`app-${i === 0 ? 1 : 3}`);
      expect(headerText(a, REDRIVE_HEADERS.redriveId)).toBe(job);
      expect(headerText(a, REDRIVE_HEADERS.redriveCount)).toBe("1");
      // No message id of its own: the first DLT record's coordinates.
      expect(headerText(a, REDRIVE_HEADERS.originalMessageId)).toBe(`${dlt}-${l.id}`);
      for (const name of Object.values(REDRIVE_HEADERS)) expect(headerBytes(a, name), name).toHaveLength(1);
      // Timestamp: the time of the redrive, not the original one.
      expect(Number(a.timestamp)).toBeGreaterThanOrEqual(t0 - 1000);
    });

    const after = await browseAll(dlt);
    expect(after.filter((l) => l.handled).map((l) => [l.id, l.handled!.outcome])).toEqual([
      ["0-1", "redriven"],
      ["0-3", "redriven"],
    ]);
    const marks = await store.handledAmong(
      connectionId,
      await kit.topicKey(dlt),
      [0, 1, 2, 3, 4].map((o) => ({ partition: 0, offset: BigInt(o) })),
    );
    expect([...marks.keys()].sort()).toEqual(["0-1", "0-3"]);
    expect([...marks.values()].every((m) => m.operationId === job)).toBe(true);
    expect((await adapter.describeDlq(dlt)).depth).toBe(5);

    // The same offsets again: never redriven twice.
    const job2 = randomUUID();
    const again = await move(
      dlt,
      chosen.map((l) => req(l, { kind: "origin" }, job2)),
    );
    expect(again.map((r) => [r.outcome, r.target])).toEqual([
      ["missing", null],
      ["missing", null],
    ]);
    for (const r of again) expect(r.reason).toMatch(/^Already handled at \d{4}-\d\d-\d\dT.*redriven/);
    expect(await arrivedOf(source, job2)).toHaveLength(0);
  });

  it("checksum mismatch: not moved, not handled", async () => {
    const { source, dlt } = await kit.springDlt([{ body: text("checksum"), key: "k" }]);
    const [l] = await browseAll(dlt);
    const job = randomUUID();
    const [r] = await move(dlt, [{ ...req(l, { kind: "origin" }, job), sha256: "0".repeat(64) }]);
    expect(r).toMatchObject({ letterId: "0-0", outcome: "checksum_mismatch", orderingKey: "k", target: null });
    expect(r.reason).toBe(moveWords("move", "DLT").mismatch);
    expect((await browseAll(dlt))[0].handled).toBeUndefined();
    expect(await arrivedOf(source, job)).toHaveLength(0);
  });

  it("explicit target topic; a missing one is not_found before anything moves", async () => {
    const { source, dlt } = await kit.springDlt([0, 1].map((i) => ({ body: text(`explicit-${i}`), key: `k${i}` })));
    const letters = await browseAll(dlt);
    const target = await kit.createTopic(kit.name("target"));
    const job = randomUUID();
    const [r] = await move(dlt, [req(letters[0], { kind: "queue", name: target }, job)]);
    expect(r).toMatchObject({ outcome: "moved", destination: `topic ${target}`, target });
    expect((await arrivedOf(target, job)).map((a) => Buffer.from(a.value!).toString())).toEqual(["explicit-0"]);
    expect(await arrivedOf(source, job)).toHaveLength(0);

    const missing = `${kit.prefix}.missing-target`;
    const job2 = randomUUID();
    await expect(
      move(dlt, [req(letters[1], { kind: "origin" }, job2), req(letters[1], { kind: "queue", name: missing }, job2)]),
    ).rejects.toMatchObject({ kind: "not_found", code: "not_found:queue" });
    await expect(move(dlt, [req(letters[1], { kind: "queue", name: dlt }, job2)])).rejects.toMatchObject({
      kind: "bad_request",
    });
    expect((await browseAll(dlt)).map((l) => l.handled?.outcome ?? null)).toEqual(["redriven", null]);
    expect(await arrivedOf(source, job2)).toHaveLength(0);
  });

  it("origin: none → failed with a reason; the configured origin is used when headers have none", async () => {
    const source = await kit.createTopic(kit.name("plain"));
    const dlt = await kit.createTopic(`${source}-dlt`);
    await kit.produce(dlt, [{ body: text("no headers"), key: "k" }]);
    const [l] = await browseAll(dlt);
    const job = randomUUID();
    const [r] = await move(dlt, [req(l, { kind: "origin" }, job)]);
    expect(r.outcome).toBe("failed");
    expect(r.reason).toMatch(/no original topic/);
    expect((await browseAll(dlt))[0].handled).toBeUndefined();

    const configured = new KafkaAdapter(testConfig({ id: connectionId, dlqs: [{ name: dlt, origin: source }] }), {
      allManagedHeaders: MANAGED_HEADERS,
      handledStore: prismaHandledStore(),
    });
    try {
      const [r2] = await move(dlt, [req(l, { kind: "origin" }, job)], configured);
      expect(r2).toMatchObject({ outcome: "moved", destination: `topic ${source}` });
      expect(await arrivedOf(source, job)).toHaveLength(1);
    } finally {
      await configured.close();
    }
  });

  it("same-key order: 20 records of 3 keys, requested shuffled, arrive per key in DLT order on a 3-partition target", async () => {
    const keys = Array.from({ length: 20 }, (_, i) => ["alpha", "beta", "gamma"][(i * 7 + (i >> 2)) % 3]);
    const { dlt } = await kit.springDlt(keys.map((key, i) => ({ body: text(`seq-${i}`), key })));
    const letters = await browseAll(dlt);
    const target = await kit.createTopic(kit.name("ordered"), 3);
    const job = randomUUID();
    const shuffled = [...letters].sort(() => Math.random() - 0.5);
    const results = await move(
      dlt,
      shuffled.map((l) => req(l, { kind: "queue", name: target }, job)),
    );
    expect(results.filter((r) => r.outcome === "moved")).toHaveLength(20);
    const arrived = await arrivedOf(target, job);
    expect(arrived).toHaveLength(20);
    for (const key of ["alpha", "beta", "gamma"]) {
      const mine = arrived.filter((a) => Buffer.from(a.key!).toString() === key);
      expect(new Set(mine.map((a) => a.partition)).size, `${key} in one partition`).toBe(1);
      const seq = mine
        .sort((a, b) => Number(BigInt(a.offset) - BigInt(b.offset)))
        .map((a) => Number(Buffer.from(a.value!).toString().slice(4)));
      expect(seq, key).toEqual(keys.flatMap((k, i) => (k === key ? [i] : [])));
    }
  });

  it("two cycles: moved, failed again into the DLT, moved again → count 2, original message id unchanged", async () => {
    const { source, dlt } = await kit.springDlt([{ body: text("cycle"), key: "c" }]);
    const [first] = await browseAll(dlt);
    const job1 = randomUUID();
    expect((await move(dlt, [req(first, { kind: "origin" }, job1)]))[0].outcome).toBe("moved");
    // The application fails again on the redriven record only (the second on the source topic).
    await kit.failingConsumer(source, dlt, 2, { fails: (_v, i) => (i === 1 ? FAIL : null) });
    const letters = await browseAll(dlt);
    expect(letters).toHaveLength(2);
    const second = letters[1];
    expect(second.handled).toBeUndefined();
    const job2 = randomUUID();
    // The caller's count is 1 (it did not look): the record's own count wins.
    const [r] = await move(dlt, [req(second, { kind: "origin" }, job2, { redriveCount: 1 })]);
    expect(r.outcome).toBe("moved");
    const [a] = await arrivedOf(source, job2);
    expect(headerText(a, REDRIVE_HEADERS.redriveCount)).toBe("2");
    expect(headerBytes(a, REDRIVE_HEADERS.redriveCount)).toHaveLength(1);
    expect(headerText(a, REDRIVE_HEADERS.originalMessageId)).toBe(`${dlt}-0-0`);
    expect(Buffer.from(a.value!).toString()).toBe("cycle");
    expect((await browseAll(dlt)).map((l) => l.handled?.outcome)).toEqual(["redriven", "redriven"]);
  });

  it("a 5 MB record: refused by a topic with a 1 MiB limit (failed, still unhandled), then moved byte-exact to its origin", async () => {
    const big = new Uint8Array(5 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 10)) & 0xff;
    const { source, dlt } = await kit.springDlt([{ body: big, key: "big" }]);
    const [l] = await browseAll(dlt);
    expect(l.bodySize).toBe(big.length);
    const small = await kit.createTopic(kit.name("small"), 1, { "max.message.bytes": String(1024 * 1024) });
    const job = randomUUID();
    const [refused] = await move(dlt, [req(l, { kind: "queue", name: small }, job)]);
    expect(refused.outcome).toBe("failed");
    expect(refused.reason).toMatch(/too large/);
    expect((await browseAll(dlt))[0].handled).toBeUndefined();
    const [r] = await move(dlt, [req(l, { kind: "origin" }, job)]);
    expect(r.outcome).toBe("moved");
    const [a] = await arrivedOf(source, job);
    expect(Buffer.from(a.value!).equals(Buffer.from(big))).toBe(true);
    expect((await browseAll(dlt))[0].handled?.outcome).toBe("redriven");
  }, 120_000);

  it("stops between letters when the signal aborts: the rest stay unhandled", async () => {
    const { dlt } = await kit.springDlt(
      Array.from({ length: 10 }, (_, i) => ({ body: text(`abort-${i}`), key: "one-key" })),
    );
    const letters = await browseAll(dlt);
    const job = randomUUID();
    const ac = new AbortController();
    const results: MoveResult[] = [];
    for await (const r of adapter.moveLetters(
      dlt,
      letters.map((l) => req(l, { kind: "origin" }, job)),
      { signal: ac.signal },
    )) {
      results.push(r);
      ac.abort();
    }
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results.length).toBeLessThan(10);
    const handled = (await browseAll(dlt)).filter((l) => l.handled).map((l) => l.id);
    expect(handled).toEqual(results.filter((r) => r.outcome === "moved").map((r) => r.letterId));
    expect(handled[0]).toBe("0-0");
  });

  it("records deleted with deleteRecords after the walk's first look and before its read: missing, saying so; the rest moves", async () => {
    const { source, dlt } = await kit.springDlt(
      [0, 1, 2, 3, 4].map((i) => ({ body: text(`trunc-${i}`), key: `t${i}` })),
    );
    const letters = await browseAll(dlt);
    // The run's handled marks are read just before its records: someone deletes records up to offset 2 then.
    const base = prismaHandledStore();
    let deleteFirst: (() => Promise<void>) | null = async () => {
      const admin = await kit.getAdmin();
      await admin.fetchTopicOffsets(dlt); // kafkajs's deleteTopicRecords needs the topic in its metadata
      await admin.deleteTopicRecords({ topic: dlt, partitions: [{ partition: 0, offset: "2" }] });
    };
    const hooked: HandledStore = {
      ...base,
      handledBetween: async (...args) => {
        const run = deleteFirst;
        deleteFirst = null;
        await run?.();
        return base.handledBetween!(...args);
      },
    };
    const racing = new KafkaAdapter(testConfig({ id: connectionId }), {
      allManagedHeaders: MANAGED_HEADERS,
      handledStore: hooked,
    });
    try {
      const job = randomUUID();
      const results = await move(
        dlt,
        letters.map((l) => req(l, { kind: "origin" }, job)),
        racing,
      );
      expect(deleteFirst).toBeNull();
      const by = new Map(results.map((r) => [r.letterId, r]));
      expect(results).toHaveLength(5);
      for (const id of ["0-0", "0-1"]) {
        const r = by.get(id)!;
        expect(r).toMatchObject({ outcome: "missing", destination: null, target: null });
        expectMissingReason(r.reason, "move", dlt);
        expect(r.reason).toMatch(/below the partition's log start \(now 2\), deleted by retention or by deleteRecords/);
      }
      for (const id of ["0-2", "0-3", "0-4"]) expect(by.get(id)).toMatchObject({ outcome: "moved", target: source });
      expect((await arrivedOf(source, job)).map((a) => Buffer.from(a.value!).toString()).sort()).toEqual([
        "trunc-2",
        "trunc-3",
        "trunc-4",
      ]);
    } finally {
      await racing.close();
    }
  });

  it("an unknown DLT is not_found", async () => {
    await expect(move(`${kit.prefix}.nothing.DLT`, [])).rejects.toMatchObject({ kind: "not_found" });
  });
});

// The shared write contracts, on the fixture of contract-fixture.ts.
const contractFixture = contractFixtureWith({ handledStore: prismaHandledStore(), allManagedHeaders: MANAGED_HEADERS });
runRedriveContract("kafka", contractFixture);
runRemoveContract("kafka", contractFixture);
