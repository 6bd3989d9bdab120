/**
 * Repair and resubmit on a real Kafka: the shared repair contract on the redrive
 * contract's fixture, plus what only Kafka has (the key, the copy's coordinates, the handled mark,
 * repeated header names, message and correlation id headers).
 * Needs Kafka (`bash scripts/services.sh start kafka`) and Postgres (DATABASE_URL, migrated).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDRIVE_HEADERS, REPAIR_HEADER } from "@/lib/brokers/contract/markers";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import type { MoveRequest } from "@/lib/brokers/contract/move";
import { collectMoves, markersFor } from "@/lib/brokers/contract-suite/redrive";
import { runRepairContract } from "@/lib/brokers/contract-suite/repair";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { createCluster, type InternalCluster, type InternalRecord } from "@/lib/brokers/kafka/client";
import { contractFixtureWith, readTopic } from "@/lib/brokers/kafka/contract-fixture";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { closeDb } from "@/lib/db";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

runRepairContract(
  "kafka",
  contractFixtureWith({ handledStore: prismaHandledStore(), allManagedHeaders: MANAGED_HEADERS }),
);

describe("Kafka repair on a real broker: what only Kafka has", () => {
  const kit = new KafkaKit();
  const store = prismaHandledStore();
  const connectionId = `repair-kafka-${randomUUID().slice(0, 8)}`;
  const adapter = new KafkaAdapter(testConfig({ id: connectionId }), {
    allManagedHeaders: MANAGED_HEADERS,
    handledStore: store,
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

  const values = (r: InternalRecord, name: string): string[] => {
    const v = r.headers?.[name];
    return (Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => Buffer.from(x as Buffer).toString("utf8"));
  };

  it("keeps the key and the failure history, collapses a repeated set header, drops every removed entry, gives new ids; copyId names the record; the original is marked handled once", async () => {
    const source = await kit.createTopic(kit.name("orders"), 3);
    const dlt = await kit.createTopic(`${source}.DLT`);
    const partitionBytes = Buffer.from([0, 0, 0, 2]);
    const producer = await kit.getProducer();
    await producer.send({
      topic: dlt,
      acks: -1,
      messages: [
        {
          key: "customer-7",
          value: '{"order":7,"status":"PAYED"}',
          headers: {
            "kafka_dlt-original-topic": source,
            "kafka_dlt-original-partition": partitionBytes,
            "x-tag": ["a", "b"],
            "x-drop": ["1", "2"],
            "message-id": "m-7",
            correlationId: "c-1",
          },
        },
      ],
    });
    const [original] = (await adapter.browse(dlt, { offset: 0, limit: 10 })).letters;
    expect(original.messageId).toBe("m-7");
    const job = randomUUID();
    const operationId = randomUUID();
    const markers = { ...markersFor(job), originalMessageId: original.messageId };
    const req: MoveRequest = {
      letterId: original.id,
      sha256: original.sha256,
      target: { kind: "origin" },
      markers,
      repair: {
        operationId,
        body: new TextEncoder().encode('{"order":7,"status":"PAID"}'),
        setHeaders: { "x-tag": "fixed" },
        removeHeaders: ["x-drop"],
        correlationId: "c-2",
      },
    };
    const archived: LetterCopy[] = [];
    const t0 = Date.now();
    const [result] = await collectMoves(
      adapter.moveLetters(dlt, [req], { beforeRemove: async (c) => void archived.push(c) }),
    );
    expect(result).toMatchObject({
      letterId: "0-0",
      outcome: "moved",
      destination: `topic ${source}`,
      orderingKey: "customer-7",
    });

    // copyId is where the copy is: <topic>/<partition>/<offset>.
    const [topic, partition, offset] = result.copyId!.split("/");
    expect(topic).toBe(source);
    const copy = (await readTopic(kit, cluster, source)).find(
      (r) => r.partition === Number(partition) && r.offset === offset,
    )!;
    expect(values(copy, REDRIVE_HEADERS.replayId)).toEqual([markers.replayId]);
    expect(Buffer.from(copy.key!).toString()).toBe("customer-7");
    expect(Buffer.from(copy.value!).toString()).toBe('{"order":7,"status":"PAID"}');
    expect(Buffer.from(copy.headers!["kafka_dlt-original-partition"] as Buffer).equals(partitionBytes)).toBe(true);
    expect(values(copy, "x-tag")).toEqual(["fixed"]);
    expect(copy.headers).not.toHaveProperty("x-drop");
    expect(values(copy, "message-id")).toEqual([markers.replayId]);
    expect(values(copy, "correlationId")).toEqual(["c-2"]);
    expect(copy.headers).not.toHaveProperty("correlation-id");
    expect(values(copy, REPAIR_HEADER)).toEqual([operationId]);
    expect(values(copy, REDRIVE_HEADERS.originalMessageId)).toEqual(["m-7"]);
    expect(Number(copy.timestamp)).toBeGreaterThanOrEqual(t0 - 1000);

    // The archive holds the original record, repeated headers and all.
    expect(archived).toHaveLength(1);
    const env = JSON.parse(Buffer.from(archived[0].envelope).toString("utf8")) as {
      offset: string;
      key: string;
      headers: Array<[string, string]>;
    };
    expect(env.offset).toBe("0");
    expect(Buffer.from(env.key, "base64").toString()).toBe("customer-7");
    expect(env.headers.filter(([n]) => n === "x-drop").map(([, v]) => Buffer.from(v, "base64").toString())).toEqual([
      "1",
      "2",
    ]);

    const marks = await store.handledAmong(connectionId, await kit.topicKey(dlt), [{ partition: 0, offset: 0n }]);
    expect([...marks.values()].map((m) => [m.outcome, m.operationId])).toEqual([["redriven", job]]);
    expect((await adapter.browse(dlt, { offset: 0, limit: 10 })).letters[0].handled?.outcome).toBe("redriven");

    // Asked again: handled, so nothing is produced or archived twice.
    const again = await collectMoves(
      adapter.moveLetters(dlt, [{ ...req, markers: { ...markersFor(randomUUID()), originalMessageId: "m-7" } }], {
        beforeRemove: async (c) => void archived.push(c),
      }),
    );
    expect(again.map((r) => r.outcome)).toEqual(["missing"]);
    expect(archived).toHaveLength(1);
  });
});
