import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig as kafkaConfig } from "@/lib/brokers/kafka/test-kit";
import { prismaHandledStore } from "@/lib/connections/kafka-handled-store";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { GROUPING_VERSION } from "./grouping";
import { refreshGroupSummary } from "./index-store";
import { groupedByOlderVersion, regroupStaleDlqs } from "./regroup";
import { scanHandler } from "./scan";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

/**
 * A DLQ grouped under an older GROUPING_VERSION (its groups from a scan before the version changed)
 * is said to be so, and where reading is free the console regroups it with one scan of its own: on
 * the real Kafka, a Spring DLT whose index still holds the keys an older console made.
 */
const enc = (s: string) => new TextEncoder().encode(s);
const kit = new KafkaKit();
const adapter = new KafkaAdapter(kafkaConfig({ id: `regroup-${randomUUID().slice(0, 6)}` }), {
  allManagedHeaders: MANAGED_HEADERS,
  handledStore: prismaHandledStore(),
});
afterAll(async () => {
  await kit.cleanup().catch(() => undefined);
  await adapter.close().catch(() => undefined);
});

async function runScan(jobId: string) {
  const worker = new JobWorker({
    handlers: { scan: scanHandler({ adapterFor: () => adapter }) },
    owner: `test-${jobId}`,
    leaseMs: 10_000,
    scope: { jobIds: [jobId] },
  });
  expect((await worker.runOnce())?.id).toBe(jobId);
  return (await jobStore().get(jobId))!;
}

const groupKeys = async (connectionId: string, queue: string) =>
  (
    await getDb().$queryRawUnsafe<Array<{ group_key: string; count: number }>>(
      `SELECT group_key, count FROM triage_groups WHERE connection_id = $1 AND queue = $2 ORDER BY group_key`,
      connectionId,
      queue,
    )
  ).map((r) => [r.group_key, r.count]);

/** What an older console left: its scan carried no grouping version, and its keys differ for one failure. */
async function asIfGroupedByAnOlderConsole(jobId: string, connectionId: string, queue: string) {
  await getDb().$executeRawUnsafe(`UPDATE jobs SET progress = progress - 'groupingVersion' WHERE id = $1::uuid`, jobId);
  await getDb().$executeRawUnsafe(
    `UPDATE triage_letters SET group_key = 'v1-' || (kafka_offset::int % 2)::text WHERE connection_id = $1 AND queue = $2`,
    connectionId,
    queue,
  );
  await refreshGroupSummary(connectionId, queue);
}

describe("regrouping after GROUPING_VERSION changed", () => {
  it("a Kafka DLT grouped by an older console is regrouped by one scan of the console's own, once", async () => {
    const dlt = await kit.createTopic(`${kit.name("orders")}.DLT`);
    const failed = (i: number) => ({
      "kafka_dlt-original-topic": "orders",
      "kafka_dlt-exception-fqcn": "org.springframework.kafka.listener.ListenerExecutionFailedException",
      "kafka_dlt-exception-cause-fqcn": "com.acme.OutOfStockException",
      "kafka_dlt-exception-message": `Listener failed; com.acme.OutOfStockException: SKU ${i} has 0 units left`,
    });
    await kit.produce(
      dlt,
      [0, 1, 2, 3].map((i) => ({ body: enc(`{"i":${i}}`), headers: failed(i) })),
    );
    const first = await jobStore().enqueue({ kind: "scan", connectionId: adapter.connectionId, queue: dlt });
    expect((await runScan(first.id)).progress).toMatchObject({ read: 4, groupingVersion: GROUPING_VERSION });
    const current = await groupKeys(adapter.connectionId, dlt);
    expect(current).toHaveLength(1);
    expect(await groupedByOlderVersion({ connectionId: adapter.connectionId, queue: dlt })).toBe(false);

    await asIfGroupedByAnOlderConsole(first.id, adapter.connectionId, dlt);
    // One failure in two groups, as an older grouping mixed with a newer one would leave it.
    expect(await groupKeys(adapter.connectionId, dlt)).toEqual([
      ["v1-0", 2],
      ["v1-1", 2],
    ]);
    expect(await groupedByOlderVersion({ connectionId: adapter.connectionId, queue: dlt })).toBe(true);

    // Where reading costs something, the console does not read on its own.
    expect((await regroupStaleDlqs(() => false)).filter((q) => q.connectionId === adapter.connectionId)).toEqual([]);
    const queued = (await regroupStaleDlqs((id) => id === adapter.connectionId)).filter(
      (q) => q.connectionId === adapter.connectionId,
    );
    expect(queued.map((q) => q.queue)).toEqual([dlt]);
    // Not twice while it waits.
    expect((await regroupStaleDlqs((id) => id === adapter.connectionId)).map((q) => q.queue)).not.toContain(dlt);

    const regroup = await runScan(queued[0].jobId);
    expect(regroup).toMatchObject({ state: "succeeded", createdBy: null });
    expect(await groupKeys(adapter.connectionId, dlt)).toEqual(current);
    expect(await groupedByOlderVersion({ connectionId: adapter.connectionId, queue: dlt })).toBe(false);
    const [audit] = await getDb().auditEvent.findMany({
      where: { operationId: queued[0].jobId, action: "triage.scan_start" },
    });
    expect(audit).toMatchObject({ actorEmail: "system", outcome: "success" });

    // A cancelled or partial scan after a version change would not regroup every letter: only a complete one counts.
    await getDb().$executeRawUnsafe(
      `UPDATE jobs SET progress = progress || '{"partial": {"reason": "held"}}'::jsonb WHERE id = $1::uuid`,
      queued[0].jobId,
    );
    await getDb().$executeRawUnsafe(
      `UPDATE jobs SET progress = progress - 'groupingVersion' WHERE id = $1::uuid`,
      first.id,
    );
    expect(await groupedByOlderVersion({ connectionId: adapter.connectionId, queue: dlt })).toBe(true);
    // One try per version: the console does not queue it again by itself.
    expect((await regroupStaleDlqs((id) => id === adapter.connectionId)).map((q) => q.queue)).not.toContain(dlt);
  });
});
