/**
 * The Kafka fixture of the shared write contracts (redrive, remove, repair): letters die into
 * `<source>.DLT` through the test kit's failing consumer (Spring Kafka's headers), and what arrives
 * is read back with plain Fetches. A module of its own so that several integration test files run
 * the contracts on it without importing (and so running) each other's tests.
 */
import { randomUUID } from "node:crypto";
import { KafkaAdapter, type KafkaAdapterOptions } from "@/lib/brokers/kafka/adapter";
import { createCluster, type InternalCluster, type InternalRecord } from "@/lib/brokers/kafka/client";
import { DEFAULT_FETCH_LIMITS, readPartition } from "@/lib/brokers/kafka/fetcher";
import { KafkaKit, testConfig, type FailureSpec } from "@/lib/brokers/kafka/test-kit";
import { parseLetterId } from "@/lib/brokers/kafka/discovery";
import type { ArrivedLetter, RedriveContractFixture } from "@/lib/brokers/contract-suite/redrive";

const FAIL: FailureSpec = { exceptionClass: "com.acme.orders.OutOfStockException", message: "sku out of stock" };

/** Every record of a topic, partition by partition, read with plain Fetches (no group). */
export async function readTopic(
  kit: KafkaKit,
  cluster: InternalCluster,
  topic: string,
): Promise<Array<InternalRecord & { partition: number }>> {
  const admin = await kit.getAdmin();
  const offsets = await admin.fetchTopicOffsets(topic);
  await cluster.addTargetTopic(topic);
  const out: Array<InternalRecord & { partition: number }> = [];
  for (const o of offsets.sort((a, b) => a.partition - b.partition)) {
    for await (const r of readPartition(cluster, topic, o.partition, BigInt(o.low), BigInt(o.high), {
      ...DEFAULT_FETCH_LIMITS,
      maxBytes: 16 * 1024 * 1024,
      maxBytesPerPartition: 16 * 1024 * 1024,
    }))
      out.push({ ...r, partition: o.partition });
  }
  return out;
}

export const headerText = (r: InternalRecord, name: string): string | null => {
  const v = r.headers?.[name];
  const one = Array.isArray(v) ? v[v.length - 1] : v;
  return one === undefined || one === null ? null : Buffer.from(one as Buffer).toString("utf8");
};
/**
 * The shared write contract's fixture. Letters die into `<source>.DLT` through the kit's failing
 * consumer. The handled-offset store and the managed header names come from the test (lib/connections'
 * Postgres store and its union of every adapter's names), so this file, which sits in a broker's
 * folder, reaches no database and no other broker itself (lib/layout.test.ts).
 */
export const contractFixtureWith =
  (options: Pick<KafkaAdapterOptions, "handledStore" | "allManagedHeaders">) =>
  async (): Promise<RedriveContractFixture> => {
    const kit = new KafkaKit();
    const adapter = new KafkaAdapter(testConfig({ id: `redrive-contract-${randomUUID().slice(0, 8)}` }), options);
    const cluster = createCluster(kit.kafka);
    await cluster.connect();
    const sources = new Map<string, { source: string; consumed: number }>();
    const read = async (topic: string): Promise<ArrivedLetter[]> =>
      (await readTopic(kit, cluster, topic)).map((r) => {
        const headers: Record<string, string> = {};
        for (const name of Object.keys(r.headers ?? {})) headers[name] = headerText(r, name) ?? "";
        return {
          body: r.value ?? new Uint8Array(0),
          headers,
          messageId: headers["message-id"] ?? null,
          orderingKey: r.key ? Buffer.from(r.key).toString() : null,
        };
      });
    /** The application consumes what arrived at the source of `dlq` since and fails on it, as its error handler would. */
    const failNew = async (dlq: string) => {
      const s = sources.get(dlq)!;
      const total = (await (await kit.getAdmin()).fetchTopicOffsets(s.source)).reduce(
        (n, o) => n + Number(o.high) - Number(o.low),
        0,
      );
      await kit.failingConsumer(s.source, dlq, total, { fails: (_v, i) => (i >= s.consumed ? FAIL : null) });
      s.consumed = total;
    };
    return {
      adapter,
      createDlq: async (letters) => {
        const { source, dlt } = await kit.springDlt(letters.map((l) => ({ ...l, key: l.orderingKey ?? null })));
        sources.set(dlt, { source, consumed: letters.length });
        return dlt;
      },
      originOf: (dlq) => ({ name: sources.get(dlq)!.source, read: () => read(sources.get(dlq)!.source) }),
      createQueue: async () => {
        const name = await kit.createTopic(kit.name("target"));
        return { name, read: () => read(name) };
      },
      deadLetterAgain: (dlq) => failNew(dlq),
      deadLetterMore: async (dlq, letters) => {
        await kit.produce(
          sources.get(dlq)!.source,
          letters.map((l) => ({ ...l, key: l.orderingKey ?? null })),
        );
        await failNew(dlq);
      },
      // Someone deletes records: a partition is truncated up to an offset, so only a partition's first
      // letter can go alone (takeAwayFirstOnly).
      takeAway: async (dlq, letter) => {
        const at = parseLetterId(letter.id);
        if (!at) throw new Error(`not a Kafka letter id: ${letter.id}`);
        const admin = await kit.getAdmin();
        // The admin may not know the topic's leader yet: deleteTopicRecords does not look it up.
        await admin.fetchTopicMetadata({ topics: [dlq] });
        await admin.deleteTopicRecords({
          topic: dlq,
          partitions: [{ partition: at.partition, offset: String(at.offset + 1n) }],
        });
        return true;
      },
      takeAwayFirstOnly: true,
      cleanup: async () => {
        await adapter.close();
        await cluster.disconnect();
        await kit.cleanup();
      },
      removesFromDlq: false,
      orderingKeys: true,
      twins: false,
    };
  };
