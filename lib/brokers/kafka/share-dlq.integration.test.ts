/**
 * Share-group dead letters on a real Kafka 4.4 (share.version=2, KIP-1191): a real share consumer
 * (Kafka's ConsoleShareConsumer) rejects records, the broker writes them to the group's DLQ topic
 * (metadata only), and the adapter discovers, reads, joins and redrives them.
 * Needs Kafka 4.4 (`bash scripts/services.sh start kafka`) and Postgres (DATABASE_URL, migrated).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import type { Letter } from "@/lib/brokers/contract/letter";
import type { MoveRequest } from "@/lib/brokers/contract/move";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { createCluster, type InternalCluster } from "@/lib/brokers/kafka/client";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { KAFKA_BROKERS, KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { headerText, readTopic } from "@/lib/brokers/kafka/contract-fixture";
import { configureShareGroupDlq, rejectWithShareConsumer } from "@/lib/brokers/kafka/share-consumer-fixture";
import { shareGroupDlqTopics } from "@/lib/brokers/kafka/group-configs";
import type { RawRequestBroker } from "@/lib/brokers/kafka/topic-ids";
import { closeDb } from "@/lib/db";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const prop = (l: Letter, name: string) => l.properties.find((p) => p.name === name)?.value;
const bodyText = (l: Letter) => Buffer.from(l.body).toString("utf8");
/** deleteRecords on partition 0 (the admin's metadata refreshed first: it may not know the topic's leader yet). */
const deleteUpTo = async (kit: KafkaKit, topic: string, offset: string) => {
  const admin = await kit.getAdmin();
  await admin.fetchTopicMetadata({ topics: [topic] });
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset }] });
};
const req = (l: Letter, job: string): MoveRequest => ({
  letterId: l.id,
  sha256: l.sha256,
  target: { kind: "origin" },
  markers: markersFor(job),
});

describe("share-group dead letters on a real Kafka 4.4", () => {
  const kit = new KafkaKit();
  // The default patterns: `dlq.*` is the broker's default prefix of share-group DLQ topics too.
  const adapter = new KafkaAdapter(testConfig({ id: `share-dlq-${randomUUID().slice(0, 8)}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: prismaHandledStore(),
  });
  let cluster: InternalCluster;
  let source: string;
  let dlq: string;
  let group: string;

  beforeAll(async () => {
    cluster = createCluster(kit.kafka);
    await cluster.connect();
    source = await kit.createTopic(kit.name("orders"));
    dlq = await kit.createTopic(`dlq.${source}`, 1, { "errors.deadletterqueue.group.enable": "true" });
    await kit.produce(
      source,
      [0, 1, 2].map((i) => ({
        body: Buffer.from(`order-${i}`),
        key: `customer-${i}`,
        messageId: `m-${i}`,
        headers: { "x-app": `app-${i}`, traceparent: `00-${i}` },
      })),
    );
    group = `${kit.prefix}-share`;
    kit.groups.add(group);
    await configureShareGroupDlq(KAFKA_BROKERS[0], group, { dlqTopic: dlq, copyRecord: false });
    await rejectWithShareConsumer(KAFKA_BROKERS[0], source, group, 3);
    // The broker writes to the DLQ as it archives the rejected records.
    const admin = await kit.getAdmin();
    for (let i = 0; i < 100; i++) {
      const [o] = await admin.fetchTopicOffsets(dlq);
      if (Number(o.high) >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);

  afterAll(async () => {
    await adapter.close();
    await cluster?.disconnect();
    await kit.cleanup();
    await closeDb();
  });

  it("lists the DLQ topic and reads each letter's share-group metadata", async () => {
    expect((await adapter.listDlqs()).find((d) => d.name === dlq)).toMatchObject({ source: "discovered", depth: 3 });
    const { letters } = await adapter.browse(dlq, { offset: 0, limit: 10 });
    expect(letters).toHaveLength(3);
    letters.forEach((l, i) => {
      expect(l.failure).toMatchObject({
        originQueue: source,
        reason: "rejected",
        exceptionMessage: "Offset rejected by client.",
        deliveryCount: 1,
      });
      expect(prop(l, "share group")).toEqual({ t: "string", v: group });
      expect(prop(l, "original topic")).toEqual({ t: "string", v: source });
      expect(prop(l, "original partition")).toEqual({ t: "number", v: "0" });
      expect(prop(l, "original offset")).toEqual({ t: "number", v: String(i) });
      expect(prop(l, "record data")).toMatchObject({ t: "string" });
      // Metadata only: the DLQ record has no data of its own.
      expect(l.bodySize).toBe(0);
    });
  });

  it("reads the share group's DLQ topic from its group config (raw DescribeConfigs, resource type 32)", async () => {
    await cluster.addTargetTopic(dlq);
    const broker = (await cluster.findControllerBroker()) as RawRequestBroker;
    const groups = (await (await kit.getAdmin()).listGroups()).groups;
    expect(groups.find((g) => g.groupId === group)).toMatchObject({ protocolType: "share" });
    const topics = await shareGroupDlqTopics(broker, [group, `${kit.prefix}-no-such-group`]);
    expect(topics).toEqual(new Map([[group, dlq]]));
  });

  it("discovers the DLQ topic a share group names in its configuration, with no pattern matching it (shareGroupDlqs)", async () => {
    const byConfig = new KafkaAdapter(
      testConfig({ id: `share-cfg-${randomUUID().slice(0, 8)}`, dltPatterns: [], shareGroupDlqs: true }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: prismaHandledStore() },
    );
    const switchedOff = new KafkaAdapter(
      testConfig({ id: `share-off-${randomUUID().slice(0, 8)}`, dltPatterns: [], shareGroupDlqs: false }),
      { allManagedHeaders: MANAGED_HEADERS, handledStore: prismaHandledStore() },
    );
    try {
      expect((await byConfig.listDlqs()).find((d) => d.name === dlq)).toMatchObject({ source: "discovered", depth: 3 });
      expect((await byConfig.describeDlq(dlq)).name).toBe(dlq);
      expect((await switchedOff.listDlqs()).map((d) => d.name)).not.toContain(dlq);
      await expect(switchedOff.describeDlq(dlq)).rejects.toMatchObject({ kind: "not_found" });
    } finally {
      await byConfig.close();
      await switchedOff.close();
    }
  });

  it("getLetter joins the original: its value and headers; a redrive puts it back on its topic with the markers and marks the DLQ offset handled", async () => {
    const originals = await readTopic(kit, cluster, source);
    const joined = (await adapter.getLetter(dlq, "0-1"))!;
    expect(bodyText(joined)).toBe("order-1");
    expect(joined.messageId).toBe("m-1");
    expect(prop(joined, "key")).toMatchObject({ text: "customer-1" });
    const own = joined.headers.filter((h) => !h.name.startsWith("__dlq.errors."));
    expect(own.map((h) => [h.name, (h.value as { text?: string }).text])).toEqual(
      Object.keys(originals[1].headers ?? {}).map((n) => [n, headerText(originals[1], n)]),
    );
    expect(joined.warnings ?? []).toEqual([]);

    // One letter redriven with the checksum of the joined letter, one with that of the DLQ record (the triage index's).
    const browsed = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    const job = randomUUID();
    const results = await collectMoves(adapter.moveLetters(dlq, [req(joined, job), req(browsed[2], job)]));
    expect(results.map((r) => [r.letterId, r.outcome, r.reason, r.destination]).sort()).toEqual([
      ["0-1", "moved", null, `topic ${source}`],
      ["0-2", "moved", null, `topic ${source}`],
    ]);
    const arrived = (await readTopic(kit, cluster, source)).filter(
      (r) => headerText(r, REDRIVE_HEADERS.redriveId) === job,
    );
    expect(
      arrived.map((r) => [
        Buffer.from(r.key!).toString(),
        Buffer.from(r.value!).toString(),
        headerText(r, "x-app"),
        headerText(r, "traceparent"),
        headerText(r, "message-id"),
      ]),
    ).toEqual([
      ["customer-1", "order-1", "app-1", "00-1", "m-1"],
      ["customer-2", "order-2", "app-2", "00-2", "m-2"],
    ]);
    // The broker's __dlq.errors.* headers are the DLQ record's, not the original's: they do not travel.
    expect(arrived.every((r) => Object.keys(r.headers ?? {}).every((n) => !n.startsWith("__dlq.errors.")))).toBe(true);
    expect(headerText(arrived[0], REDRIVE_HEADERS.redriveCount)).toBe("1");
    const after = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    expect(after.map((l) => l.handled?.outcome ?? null)).toEqual([null, "redriven", "redriven"]);
  });

  it("a metadata-only letter whose original was deleted says so, and its redrive fails with that reason and leaves it", async () => {
    await deleteUpTo(kit, source, "3");
    const gone = (await adapter.getLetter(dlq, "0-0"))!;
    expect(gone.bodySize).toBe(0);
    expect(gone.warnings).toEqual([
      expect.objectContaining({ code: "original_gone", message: expect.stringContaining("no longer retained") }),
    ]);
    const results = await collectMoves(adapter.moveLetters(dlq, [req(gone, randomUUID())]));
    expect(results).toEqual([
      expect.objectContaining({
        letterId: "0-0",
        outcome: "failed",
        reason: expect.stringContaining("no longer retained"),
      }),
    ]);
    expect((await adapter.browse(dlq, { offset: 0, limit: 10 })).letters[0].handled).toBeUndefined();
  });
});

describe("share-group dead letters with copy.record.enable, and past the delivery limit", () => {
  const kit = new KafkaKit();
  const adapter = new KafkaAdapter(testConfig({ id: `share-copy-${randomUUID().slice(0, 8)}` }), {
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

  /** A source topic with these records, its share group's DLQ topic, and the consumer run that fills it. */
  const shareDlq = async (
    n: number,
    group: { copyRecord: boolean; deliveryCountLimit?: number; release?: boolean; reads: number },
  ) => {
    const source = await kit.createTopic(kit.name("orders"));
    const dlq = await kit.createTopic(`dlq.${source}`, 1, { "errors.deadletterqueue.group.enable": "true" });
    await kit.produce(
      source,
      Array.from({ length: n }, (_, i) => ({
        body: Buffer.from(`order-${i}`),
        key: `customer-${i}`,
        headers: { "x-app": `app-${i}` },
      })),
    );
    const name = `${kit.prefix}-share-${kit.groups.size}`;
    kit.groups.add(name);
    await configureShareGroupDlq(KAFKA_BROKERS[0], name, {
      dlqTopic: dlq,
      copyRecord: group.copyRecord,
      deliveryCountLimit: group.deliveryCountLimit,
    });
    await rejectWithShareConsumer(KAFKA_BROKERS[0], source, name, group.reads, { release: group.release });
    const admin = await kit.getAdmin();
    for (let i = 0; i < 100 && Number((await admin.fetchTopicOffsets(dlq))[0].high) < n; i++)
      await new Promise((r) => setTimeout(r, 100));
    return { source, dlq, group: name };
  };

  it("a copied letter holds key and value but not the original's headers: getLetter and redrive take them from the original; once it is gone, the copy is redriven without them", async () => {
    const { source, dlq } = await shareDlq(2, { copyRecord: true, reads: 2 });
    const browsed = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    expect(
      browsed.map((l) => [bodyText(l), prop(l, "record data"), l.headers.some((h) => h.name === "x-app")]),
    ).toEqual([
      ["order-0", undefined, false],
      ["order-1", undefined, false],
    ]);
    const joined = (await adapter.getLetter(dlq, "0-0"))!;
    expect(joined.headers.find((h) => h.name === "x-app")?.value).toMatchObject({ text: "app-0" });
    expect(joined.sha256).toBe(browsed[0].sha256);
    const job: string = randomUUID();
    expect((await collectMoves(adapter.moveLetters(dlq, [req(joined, job)])))[0]).toMatchObject({
      outcome: "moved",
      destination: `topic ${source}`,
    });

    await deleteUpTo(kit, source, "2");
    const copied = (await adapter.getLetter(dlq, "0-1"))!;
    expect(bodyText(copied)).toBe("order-1");
    expect(copied.warnings).toEqual([
      expect.objectContaining({
        code: "original_gone",
        message: expect.stringContaining("without the original headers"),
      }),
    ]);
    const job2: string = randomUUID();
    expect((await collectMoves(adapter.moveLetters(dlq, [req(copied, job2)])))[0]).toMatchObject({ outcome: "moved" });
    const arrived = (await readTopic(kit, cluster, source)).filter((r) =>
      [job, job2].includes(headerText(r, REDRIVE_HEADERS.redriveId)!),
    );
    expect(
      arrived.map((r) => [Buffer.from(r.key!).toString(), Buffer.from(r.value!).toString(), headerText(r, "x-app")]),
    ).toEqual([
      ["customer-0", "order-0", "app-0"],
      ["customer-1", "order-1", null],
    ]);
  });

  it("a record released until the group's delivery limit is dead-lettered with that reason and its delivery count", async () => {
    const { source, group, dlq } = await shareDlq(1, {
      copyRecord: false,
      deliveryCountLimit: 2,
      release: true,
      reads: 2,
    });
    const [l] = (await adapter.browse(dlq, { offset: 0, limit: 10 })).letters;
    expect(l.failure).toMatchObject({
      originQueue: source,
      reason: "delivery_limit",
      exceptionMessage: "Offset delivery count exceeded the threshold.",
      deliveryCount: 2,
    });
    expect(prop(l, "share group")).toEqual({ t: "string", v: group });
  });
});
