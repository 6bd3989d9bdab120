/**
 * Redrive after someone else deleted a topic the adapter's producer had written to. kafkajs
 * refreshes a client's metadata for every topic it was ever given, so once one of them is deleted
 * each refresh fails with UNKNOWN_TOPIC_OR_PARTITION; the producer must go on writing to the topics
 * that still exist. Needs Kafka on 127.0.0.1:9092 and Postgres (DATABASE_URL, migrated).
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Kafka } from "kafkajs";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter, LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest, RedriveTarget } from "@/lib/brokers/contract/move";
import type { RemoveResult, RepublishResult } from "@/lib/brokers/contract/remove";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { createCluster, createProducerWithCluster, type InternalRecord } from "@/lib/brokers/kafka/client";
import { lazyProducer, produceFailure } from "@/lib/brokers/kafka/mover";
import { DEFAULT_FETCH_LIMITS, readPartition } from "@/lib/brokers/kafka/fetcher";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { collect, collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { closeDb } from "@/lib/db";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const bytes = (b: Uint8Array | Buffer | null | undefined) => (b === null || b === undefined ? null : Buffer.from(b));

/**
 * Every record of a topic, read by a fresh group-less client each time: a long-lived one would itself
 * fail on the deleted topic once it had read it.
 */
async function readTopic(kafka: Kafka, topic: string): Promise<Array<InternalRecord & { partition: number }>> {
  const c = createCluster(kafka);
  await c.connect();
  try {
    await c.addTargetTopic(topic);
    const partitions = c.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId }));
    const [[low], [high]] = await Promise.all(
      [true, false].map((fromBeginning) => c.fetchTopicsOffset([{ topic, fromBeginning, partitions }])),
    );
    const out: Array<InternalRecord & { partition: number }> = [];
    for (const { partition } of partitions.sort((a, b) => a.partition - b.partition)) {
      const from = BigInt(low.partitions.find((p) => p.partition === partition)!.offset);
      const to = BigInt(high.partitions.find((p) => p.partition === partition)!.offset);
      for await (const r of readPartition(c, topic, partition, from, to, DEFAULT_FETCH_LIMITS))
        out.push({ ...r, partition });
    }
    return out;
  } finally {
    await c.disconnect();
  }
}

const headerBytes = (r: InternalRecord, name: string): Buffer[] => {
  const v = r.headers?.[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => Buffer.from(x as Buffer));
};
const headerText = (r: InternalRecord, name: string) => headerBytes(r, name).at(-1)?.toString("utf8") ?? null;

/** Deletes `topics` with the kit's own admin (another client than the adapter's) and waits until the broker no longer lists them. */
async function deleteElsewhere(kit: KafkaKit, topics: string[]) {
  const admin = await kit.getAdmin();
  await admin.deleteTopics({ topics, timeout: 10_000 });
  for (const t of topics) kit.topics.delete(t);
  for (let i = 0; i < 50 && (await admin.listTopics()).some((n) => topics.includes(n)); i++)
    await new Promise((r) => setTimeout(r, 200));
  expect((await admin.listTopics()).filter((n) => topics.includes(n))).toEqual([]);
}

describe("Kafka redrive after another client deleted a topic the producer had written to", () => {
  const tag = `dt${randomUUID().slice(0, 8)}`;
  // One kit per test: a kit's own producer, having written to a topic deleted later, would fail the same way.
  const kits = [new KafkaKit(`${tag}-a`), new KafkaKit(`${tag}-b`), new KafkaKit(`${tag}-c`)];
  const store = prismaHandledStore();
  const connectionId = `deleted-target-${tag}`;
  // One adapter per test too (each has its own producer). Discovery limited to this run's DLTs:
  // the shared broker holds other runs' topics.
  const adapters = kits.slice(0, 2).map(
    () =>
      new KafkaAdapter(testConfig({ id: connectionId, dltPatterns: [`${tag}-*.DLT`] }), {
        allManagedHeaders: MANAGED_HEADERS,
        handledStore: store,
      }),
  );
  afterAll(async () => {
    for (const a of adapters) await a.close();
    for (const kit of kits) await kit.cleanup();
    await closeDb();
  });

  const req = (l: Letter, target: RedriveTarget, job: string): MoveRequest => ({
    letterId: l.id,
    sha256: l.sha256,
    target,
    markers: markersFor(job),
  });
  const using = (adapter: KafkaAdapter) => ({
    browseAll: async (dlq: string) => (await adapter.browse(dlq, { offset: 0, limit: 100 })).letters,
    move: (dlq: string, reqs: MoveRequest[]) => collectMoves(adapter.moveLetters(dlq, reqs)),
  });

  it("moves to an existing topic byte-exact and marks it handled; the deleted topic fails for its letter only, which stays unhandled", async () => {
    const [kit, adapter] = [kits[0], adapters[0]];
    const { browseAll, move } = using(adapter);
    // The letters died on s1 (their original topic); s2 is another existing topic.
    const s1 = await kit.createTopic(kit.name("s1"));
    const s2 = await kit.createTopic(kit.name("s2"), 2);
    const dlt = await kit.createTopic(`${s1}.DLT`);
    const bodies = [
      text("to-s1"),
      Uint8Array.from([0x00, 0xff, 0xc3, 0x28, 0x0a]),
      text("origin-gone"),
      text("explicit-gone"),
    ];
    await kit.produce(
      s1,
      bodies.map((body, i) => ({ body, key: `key-${i}`, headers: { "x-app": `app-${i}` } })),
    );
    await kit.failingConsumer(s1, dlt, bodies.length);
    const letters = await browseAll(dlt);
    expect(letters.map((l) => l.id)).toEqual(["0-0", "0-1", "0-2", "0-3"]);
    const dltRecords = await readTopic(kit.kafka, dlt);

    // The adapter's producer writes to s1: s1 becomes one of its client's topics.
    const job1 = randomUUID();
    const [first] = await move(dlt, [req(letters[0], { kind: "queue", name: s1 }, job1)]);
    expect(first).toMatchObject({ letterId: "0-0", outcome: "moved", destination: `topic ${s1}`, reason: null });
    expect(
      (await readTopic(kit.kafka, s1))
        .filter((r) => headerText(r, REDRIVE_HEADERS.redriveId) === job1)
        .map((r) => bytes(r.value)?.toString()),
    ).toEqual(["to-s1"]);

    await deleteElsewhere(kit, [s1]);

    // An existing topic the producer has not written to yet.
    const job2 = randomUUID();
    const r2 = req(letters[1], { kind: "queue", name: s2 }, job2);
    const [second] = await move(dlt, [r2]);
    expect(second).toMatchObject({ letterId: "0-1", outcome: "moved", destination: `topic ${s2}`, reason: null });
    const arrived = (await readTopic(kit.kafka, s2)).filter((r) => headerText(r, REDRIVE_HEADERS.redriveId) === job2);
    expect(arrived).toHaveLength(1);
    const [a] = arrived;
    const original = dltRecords[1];
    expect(bytes(a.value)!.equals(Buffer.from(bodies[1]))).toBe(true);
    expect(bytes(a.key)!.equals(bytes(original.key)!)).toBe(true);
    for (const name of Object.keys(original.headers ?? {}))
      expect(headerBytes(a, name), name).toEqual(headerBytes(original, name));
    expect(headerText(a, REDRIVE_HEADERS.replayId)).toBe(r2.markers.replayId);
    expect(headerText(a, REDRIVE_HEADERS.originalMessageId)).toBe(`${dlt}-0-1`);

    // The DLT marks exactly the two moved offsets handled, each under its own job.
    const marks = await store.handledAmong(
      connectionId,
      await kit.topicKey(dlt),
      [0, 1, 2, 3].map((o) => ({ partition: 0, offset: BigInt(o) })),
    );
    expect([...marks.entries()].map(([k, m]) => [k, m.outcome, m.operationId]).sort()).toEqual([
      ["0-0", "redriven", job1],
      ["0-1", "redriven", job2],
    ]);

    // To the deleted topic as the letter's origin: that letter fails with the reason, nothing is produced.
    const job3 = randomUUID();
    const [third] = await move(dlt, [req(letters[2], { kind: "origin" }, job3)]);
    expect(third).toMatchObject({ letterId: "0-2", outcome: "failed" });
    expect(third.reason).toContain(`"${s1}" does not exist`);
    expect(third.reason).toMatch(/still in the DLT/);

    // As an explicit target: refused before anything moves, with the reason.
    const job4 = randomUUID();
    const refused = await move(dlt, [req(letters[3], { kind: "queue", name: s1 }, job4)]).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "not_found" });
    expect((refused as Error & { userMessage: string }).userMessage).toMatch(
      new RegExp(`"${s1.replace(/\./g, "\\.")}" does not exist.*Nothing was moved`),
    );

    expect((await browseAll(dlt)).map((l) => [l.id, l.handled?.outcome ?? null])).toEqual([
      ["0-0", "redriven"],
      ["0-1", "redriven"],
      ["0-2", null],
      ["0-3", null],
    ]);

    // The rest still moves: the same letters to s2, one call, both moved.
    const job5 = randomUUID();
    const last = await move(dlt, [
      req(letters[2], { kind: "queue", name: s2 }, job5),
      req(letters[3], { kind: "queue", name: s2 }, job5),
    ]);
    expect(last.map((r) => [r.letterId, r.outcome]).sort()).toEqual([
      ["0-2", "moved"],
      ["0-3", "moved"],
    ]);
    expect(
      (await readTopic(kit.kafka, s2))
        .filter((r) => headerText(r, REDRIVE_HEADERS.redriveId) === job5)
        .map((r) => bytes(r.value)!.toString())
        .sort(),
    ).toEqual(["explicit-gone", "origin-gone"]);
    expect((await browseAll(dlt)).every((l) => l.handled?.outcome === "redriven")).toBe(true);
  });

  it("undo of a discard produces the record into its DLT again after a topic the producer had written to was deleted", async () => {
    const [kit, adapter] = [kits[1], adapters[1]];
    const { browseAll, move } = using(adapter);
    const u1 = await kit.createTopic(kit.name("u1"));
    const dlt = await kit.createTopic(`${kit.name("undo")}.DLT`);
    await kit.produce(dlt, [
      { body: text("moved"), key: "m" },
      { body: text("discarded"), key: "d", headers: { "x-app": "undo" } },
    ]);
    const [toMove, toDiscard] = await browseAll(dlt);
    expect((await move(dlt, [req(toMove, { kind: "queue", name: u1 }, randomUUID())]))[0].outcome).toBe("moved");
    await deleteElsewhere(kit, [u1]);

    const operationId = randomUUID();
    const copies: LetterCopy[] = [];
    const removed = await collect<RemoveResult>(
      adapter.removeLetters(dlt, [{ letterId: toDiscard.id, sha256: toDiscard.sha256 }], {
        operationId,
        beforeRemove: async (c) => void copies.push(c),
      }),
    );
    expect(removed.map((r) => r.outcome)).toEqual(["removed"]);
    // Retention (simulated): both records are deleted from the log, so the undo has to produce again.
    const admin = await kit.getAdmin();
    await admin.fetchTopicMetadata({ topics: [dlt] });
    await admin.deleteTopicRecords({ topic: dlt, partitions: [{ partition: 0, offset: "2" }] });

    const results = await collect<RepublishResult>(
      adapter.republish(
        dlt,
        copies.map((c) => ({ id: c.letterId, envelope: c.envelope, body: c.letter.body })),
        { operationId },
      ),
    );
    expect(results).toEqual([
      expect.objectContaining({ id: "0-1", outcome: "published", how: "published", letterId: "0-2", reason: null }),
    ]);
    const after = await browseAll(dlt);
    expect(after.map((l) => [l.id, Buffer.from(l.body).toString(), l.orderingKey, l.handled ?? null])).toEqual([
      ["0-2", "discarded", "d", null],
    ]);
    expect(after[0].headers).toEqual(copies[0].letter.headers);
  });

  it("the shared producer: concurrent sends after a delete each arrive once, the deleted topic fails as unknown and is not created again, close waits for sends in flight", async () => {
    const kit = kits[2];
    const [gone, b, c] = [
      await kit.createTopic(kit.name("gone")),
      await kit.createTopic(kit.name("b"), 3),
      await kit.createTopic(kit.name("c")),
    ];
    // The adapter's configuration of redrive's producer.
    const producer = lazyProducer(() =>
      createProducerWithCluster(kit.kafka, {
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
      }),
    );
    const message = (v: string) => ({ key: v, value: Buffer.from(v), headers: { "x-test": Buffer.from(tag) } });
    const values = async (topic: string) =>
      (await readTopic(kit.kafka, topic)).map((r) => bytes(r.value)!.toString()).sort();
    try {
      await producer.send(gone, message("gone-0"));
      await deleteElsewhere(kit, [gone]);

      // 16 letters in flight at once, as a move runs them, and one to the deleted topic among them.
      const toB = Array.from({ length: 10 }, (_, i) => `b-${String(i).padStart(2, "0")}`);
      const toC = Array.from({ length: 6 }, (_, i) => `c-${i}`);
      const sends = [
        ...toB.map((v) => producer.send(b, message(v))),
        producer.send(gone, message("gone-1")),
        ...toC.map((v) => producer.send(c, message(v))),
      ];
      const settled = await Promise.allSettled(sends);
      expect(settled.map((s) => s.status)).toEqual([
        ...toB.map(() => "fulfilled"),
        "rejected",
        ...toC.map(() => "fulfilled"),
      ]);
      const err = (settled[toB.length] as PromiseRejectedResult).reason;
      const failure = produceFailure(err, gone, 6, () => new BrokerError("protocol", { userMessage: "not expected" }));
      expect(failure).toEqual({
        reason: `Topic "${gone}" does not exist (any more). It is still in the DLT.`,
        stop: null,
      });
      expect((await (await kit.getAdmin()).listTopics()).includes(gone)).toBe(false);
      expect(await values(b)).toEqual(toB);
      expect(await values(c)).toEqual(toC);

      // Close right after handing out sends: they complete, then the producer disconnects.
      const late = ["b-late-0", "b-late-1", "b-late-2"];
      const inFlight = late.map((v) => producer.send(b, message(v)));
      await producer.close();
      expect((await Promise.allSettled(inFlight)).map((s) => s.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "fulfilled",
      ]);
      expect(await values(b)).toEqual([...toB, ...late].sort());
      // A later send connects a new producer.
      await producer.send(c, message("c-after-close"));
      expect(await values(c)).toEqual([...toC, "c-after-close"].sort());
    } finally {
      await producer.close();
    }
  });
});
