import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Admin } from "kafkajs";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { closeDb, getDb } from "@/lib/db";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);

/** Kafka needs a moment after a delete before the name can be created again. */
async function createAgain(kit: KafkaKit, admin: Admin, topic: string) {
  await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
  for (let i = 0; ; i++) {
    try {
      await kit.createTopic(topic, 1);
      return;
    } catch (e) {
      if (i >= 50) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

describe("Kafka handled offsets belong to one topic, not to its name", () => {
  const kit = new KafkaKit();
  const tag = randomUUID().slice(0, 8);
  const connectionId = `recreate-kafka-${tag}`;
  const adapter = new KafkaAdapter(testConfig({ id: connectionId }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
    await getDb()
      .kafkaHandledOffset.deleteMany({ where: { connectionId } })
      .catch(() => undefined);
    await closeDb();
  });

  const letters = async (dlt: string) => (await adapter.browse(dlt, { offset: 0, limit: 100 })).letters;
  const handledIds = async (dlt: string) => (await letters(dlt)).filter((l) => l.handled).map((l) => l.id);
  const streamedHandled = async (dlt: string) => {
    const out: string[] = [];
    for await (const l of adapter.stream(dlt)) if (l.handled) out.push(l.id);
    return out;
  };
  const handledCount = async (dlt: string) => (await adapter.describeDlq(dlt)).partitions?.[0].handled;

  it("a topic deleted and created again shows its new letters as waiting; an unchanged topic keeps its marks", async () => {
    const source = await kit.createTopic(`orders-${tag}`, 1);
    const recreated = await kit.createTopic(`orders-${tag}.DLT`, 1);
    const unchanged = await kit.createTopic(`payments-${tag}.DLT`, 1);
    for (const dlt of [recreated, unchanged])
      await kit.produce(
        dlt,
        [0, 1, 2].map((i) => ({ body: text(`old-${i}`) })),
      );

    // Redrive the first two of each, as an operator would: the mover marks them handled.
    const job = randomUUID();
    for (const dlt of [recreated, unchanged]) {
      const reqs = (await letters(dlt)).slice(0, 2).map((l) => ({
        letterId: l.id,
        sha256: l.sha256,
        target: { kind: "queue" as const, name: source },
        markers: markersFor(job),
      }));
      expect((await collectMoves(adapter.moveLetters(dlt, reqs))).map((r) => [r.letterId, r.outcome])).toEqual([
        ["0-0", "moved"],
        ["0-1", "moved"],
      ]);
      expect(await handledIds(dlt)).toEqual(["0-0", "0-1"]);
    }

    // Deleted and created again, with new letters at the same offsets 0, 1 and 2.
    await createAgain(kit, await kit.getAdmin(), recreated);
    await kit.produce(
      recreated,
      [0, 1, 2].map((i) => ({ body: text(`new-${i}`) })),
    );
    const fresh = await letters(recreated);
    expect(fresh.map((l) => l.id)).toEqual(["0-0", "0-1", "0-2"]);
    expect(fresh.filter((l) => l.handled).map((l) => l.id)).toEqual([]);
    expect(await streamedHandled(recreated)).toEqual([]);
    expect((await adapter.getLetter(recreated, "0-0"))?.handled).toBeUndefined();
    expect(await handledCount(recreated)).toBe(0);
    // And they can be redriven (the old marks do not make them "already handled").
    const again = fresh.slice(0, 1).map((l) => ({
      letterId: l.id,
      sha256: l.sha256,
      target: { kind: "queue" as const, name: source },
      markers: markersFor(randomUUID()),
    }));
    expect((await collectMoves(adapter.moveLetters(recreated, again))).map((r) => r.outcome)).toEqual(["moved"]);
    expect(await handledIds(recreated)).toEqual(["0-0"]);

    // The topic that was left alone keeps its marks everywhere.
    expect(await handledIds(unchanged)).toEqual(["0-0", "0-1"]);
    expect(await streamedHandled(unchanged)).toEqual(["0-0", "0-1"]);
    expect(await handledCount(unchanged)).toBe(2);
  });

  it("marks from before topic ids were kept count only for records older than the mark, and then take the id", async () => {
    const recreated = await kit.createTopic(`refunds-${tag}.DLT`, 1);
    const unchanged = await kit.createTopic(`invoices-${tag}.DLT`, 1);
    for (const dlt of [recreated, unchanged])
      await kit.produce(
        dlt,
        [0, 1, 2].map((i) => ({ body: text(`old-${i}`) })),
      );
    const legacy = (topic: string) =>
      getDb().kafkaHandledOffset.createMany({
        data: [0n, 1n].map((offset) => ({
          connectionId,
          topic,
          partition: 0,
          offset,
          operationId: randomUUID(),
          outcome: "redriven" as const,
          handledAt: new Date(),
        })),
      });
    await legacy(recreated);
    await legacy(unchanged);
    await new Promise((r) => setTimeout(r, 20));
    await createAgain(kit, await kit.getAdmin(), recreated);
    await kit.produce(
      recreated,
      [0, 1, 2].map((i) => ({ body: text(`new-${i}`) })),
    );

    expect(await handledIds(recreated)).toEqual([]);
    expect(await streamedHandled(recreated)).toEqual([]);
    expect(await handledCount(recreated)).toBe(0);

    // Before any read, counts leave unverified marks out; a read verifies and adopts them.
    expect(await handledCount(unchanged)).toBe(0);
    expect(await handledIds(unchanged)).toEqual(["0-0", "0-1"]);
    for (let i = 0; i < 50 && (await handledCount(unchanged)) !== 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await handledCount(unchanged)).toBe(2);
    const rows = await getDb().kafkaHandledOffset.findMany({
      where: { connectionId, topic: { in: [recreated, unchanged] } },
      select: { topic: true, topicId: true },
    });
    expect(rows.filter((r) => r.topic === unchanged).every((r) => /^[0-9a-f-]{36}$/.test(r.topicId))).toBe(true);
    expect(rows.filter((r) => r.topic === recreated).every((r) => r.topicId === "")).toBe(true);
  });
});
