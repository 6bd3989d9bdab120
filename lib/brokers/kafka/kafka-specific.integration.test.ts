import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayText } from "@/lib/brokers/display";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { closeDb } from "@/lib/db";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);
const prop = (l: { properties: { name: string; value: unknown }[] }, name: string) =>
  displayText(l.properties.find((p) => p.name === name)?.value as never);

describe("Kafka adapter on a real broker", () => {
  const kit = new KafkaKit();
  const store = prismaHandledStore();
  const connectionId = `test-kafka-${randomUUID().slice(0, 8)}`;
  const adapter = new KafkaAdapter(testConfig({ id: connectionId }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
    await closeDb();
  });

  let spring: { source: string; dlt: string; group: string };
  beforeAll(async () => {
    // Three partitions; the application fails on every other record.
    const letters = Array.from({ length: 12 }, (_, i) => ({
      body: text(JSON.stringify({ order: i })),
      key: `customer-${i % 4}`,
      partition: i % 3,
    }));
    spring = await kit.springDlt(letters, {
      partitions: 3,
      fails: (_v, i) =>
        i % 2 === 0
          ? { exceptionClass: "com.acme.orders.OutOfStockException", message: `sku ${i} out of stock` }
          : null,
    });
  });

  it("decodes what Spring's recoverer wrote: exception, cause, original topic/partition/offset, group", async () => {
    const page = await adapter.browse(spring.dlt, { offset: 0, limit: 100 });
    expect(page.depth).toBe(6);
    expect(page.letters).toHaveLength(6);
    for (const l of page.letters) {
      // The cause Spring named, with its own message; the wrapper beside it.
      expect(l.failure.exceptionClass).toBe("com.acme.orders.OutOfStockException");
      expect(l.failure.wrapperClass).toBe("org.springframework.kafka.listener.ListenerExecutionFailedException");
      expect(l.failure.exceptionMessage).toMatch(/^sku \d+ out of stock$/);
      expect(l.failure.reason).toBe("listener failed");
      expect(l.history[0].reason).toBe("listener failed: com.acme.orders.OutOfStockException");
      expect(l.failure.originQueue).toBe(spring.source);
      expect(prop(l, "original consumer group")).toBe(spring.group);
      expect(prop(l, "original partition")).toBe(prop(l, "partition"));
      expect(Number(prop(l, "original offset"))).toBeGreaterThanOrEqual(0);
      expect(l.orderingKey).toMatch(/^customer-\d$/);
      expect(l.id).toBe(`${prop(l, "partition")}-${prop(l, "offset")}`);
      expect(l.history[0].queue).toBe(spring.source);
    }
    // Oldest first, partition by partition.
    expect(page.letters.map((l) => l.id)).toEqual(["0-0", "0-1", "1-0", "1-1", "2-0", "2-1"]);
    // The DLT names the topic its letters name as their origin.
    expect((await adapter.describeDlq(spring.dlt)).origins).toEqual([spring.source]);
  });

  it("reads one partition from an offset, newest first, and never joins or commits a group", async () => {
    const groupsBefore = (await (await kit.getAdmin()).listGroups()).groups.map((g) => g.groupId);
    const newest = await adapter.browse(spring.dlt, { offset: 0, limit: 10, order: "newest" });
    expect(newest.letters.map((l) => l.id)).toEqual(["2-1", "2-0", "1-1", "1-0", "0-1", "0-0"]);
    expect(newest.letters.map((l) => l.position)).toEqual([0, 1, 2, 3, 4, 5]);
    const p1 = await adapter.browse(spring.dlt, { offset: 0, limit: 10, partition: 1, fromOffset: "1" });
    expect(p1.letters.map((l) => l.id)).toEqual(["1-1"]);
    const p1n = await adapter.browse(spring.dlt, { offset: 0, limit: 1, partition: 1, order: "newest" });
    expect(p1n.letters.map((l) => l.id)).toEqual(["1-1"]);
    expect(p1n.hasMore).toBe(true);
    const groupsAfter = (await (await kit.getAdmin()).listGroups()).groups.map((g) => g.groupId);
    expect(groupsAfter.filter((g) => !groupsBefore.includes(g))).toEqual([]);
    await expect(adapter.browse(spring.dlt, { offset: 0, limit: 1, partition: 7 })).rejects.toMatchObject({
      kind: "bad_request",
    });
  });

  it("shows partitions, handled counts and the oldest unhandled letter; marks handled letters", async () => {
    const before = await adapter.describeDlq(spring.dlt);
    expect(before.partitions?.map((p) => [p.partition, p.start, p.end, p.letters, p.handled])).toEqual([
      [0, "0", "2", 2, 0],
      [1, "0", "2", 2, 0],
      [2, "0", "2", 2, 0],
    ]);
    expect(before.partitions?.every((p) => p.oldestUnhandledAt !== null)).toBe(true);
    const operationId = randomUUID();
    const topic = await kit.topicKey(spring.dlt);
    expect(
      await store.markHandled(
        connectionId,
        topic,
        [
          { partition: 1, offset: 0n },
          { partition: 1, offset: 1n },
          { partition: 2, offset: 0n },
        ],
        { operationId, outcome: "redriven" },
      ),
    ).toBe(3);
    // Marking again keeps the first decision.
    expect(
      await store.markHandled(connectionId, topic, [{ partition: 2, offset: 0n }], {
        operationId: randomUUID(),
        outcome: "discarded",
      }),
    ).toBe(0);
    const after = await adapter.describeDlq(spring.dlt);
    expect(after.partitions?.map((p) => p.handled)).toEqual([0, 2, 1]);
    expect(after.partitions?.[1].oldestUnhandledAt).toBeNull();
    expect(after.depth).toBe(6);
    expect(displayText(after.facts.find((f) => f.name === "unhandled")?.value)).toBe("3");
    const page = await adapter.browse(spring.dlt, { offset: 0, limit: 10 });
    expect(page.letters.filter((l) => l.handled).map((l) => [l.id, l.handled!.outcome])).toEqual([
      ["1-0", "redriven"],
      ["1-1", "redriven"],
      ["2-0", "redriven"],
    ]);
    const streamed = [];
    for await (const l of adapter.stream(spring.dlt)) streamed.push(l);
    expect(streamed.filter((l) => l.handled).map((l) => l.id)).toEqual(["1-0", "1-1", "2-0"]);
    expect((await adapter.getLetter(spring.dlt, "1-1"))?.handled?.outcome).toBe("redriven");
  });

  it("decodes Connect's DLQ headers from a failing sink task", async () => {
    const { source, dlt, connector } = await kit.connectDlq([
      { body: text("not json {") },
      { body: text("also not json") },
    ]);
    const [l] = (await adapter.browse(dlt, { offset: 0, limit: 1 })).letters;
    expect(l.failure.exceptionClass).toBe("org.apache.kafka.connect.errors.DataException");
    expect(l.failure.reason).toBe("value converter failed");
    expect(l.failure.originQueue).toBe(source);
    expect(prop(l, "connector")).toBe(`${connector} (task 0)`);
    expect(prop(l, "original offset")).toBe("0");
  });

  it("warns about a compacted DLT and a letter near its retention", async () => {
    const { dlt } = await kit.springDlt([{ body: text("old"), key: "k" }], {
      dltConfigs: { "cleanup.policy": "compact,delete", "retention.ms": "1000" },
    });
    await new Promise((r) => setTimeout(r, 900));
    const s = await adapter.describeDlq(dlt);
    expect(s.warnings.map((w) => w.code)).toEqual(expect.arrayContaining(["compacted", "near_retention"]));
    expect(displayText(s.facts.find((f) => f.name === "cleanup.policy")?.value)).toBe("compact,delete");
  });

  it("not_found for an unknown topic and for a topic that is not a DLT; null for a gone offset", async () => {
    await expect(adapter.describeDlq(`missing-${randomUUID()}.DLT`)).rejects.toBeInstanceOf(BrokerError);
    await expect(adapter.describeDlq(spring.source)).rejects.toMatchObject({ kind: "not_found" });
    expect(await adapter.getLetter(spring.dlt, "0-99")).toBeNull();
    expect(await adapter.getLetter(spring.dlt, "9-0")).toBeNull();
  });

  it("reports a dead broker as unreachable within seconds", async () => {
    const dead = new KafkaAdapter(testConfig({ brokers: ["127.0.0.1:1"] }), {
      allManagedHeaders: MANAGED_HEADERS,
      client: { connectionTimeoutMs: 1000, retries: 1 },
      handledStore: null,
    });
    const t0 = Date.now();
    await expect(dead.listDlqs()).rejects.toMatchObject({ kind: "unreachable", code: "unavailable:broker" });
    expect(Date.now() - t0).toBeLessThan(10_000);
    await dead.close();
  });
});
