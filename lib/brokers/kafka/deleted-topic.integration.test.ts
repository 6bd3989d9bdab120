import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { DlqSummary } from "@/lib/brokers/contract/dlq";
import { KafkaAdapter } from "@/lib/brokers/kafka/adapter";
import { KafkaKit, testConfig } from "@/lib/brokers/kafka/test-kit";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const text = (s: string) => new TextEncoder().encode(s);

/**
 * kafkajs keeps every topic a client has looked at in its metadata; once someone else deletes one
 * of them, each later metadata refresh of that client fails. The adapter must go on serving the
 * topics that still exist.
 */
describe("Kafka adapter after another client deleted a topic it had seen", () => {
  const tag = randomUUID().slice(0, 8);
  const kit = new KafkaKit(`del-${tag}`);
  const t = {
    /** Configured, deleted: listed as missing. */
    gone: `del-${tag}-gone.DLT`,
    /** Configured, kept. */
    kept: `del-${tag}-kept.DLT`,
    /** Discovered only, deleted: no longer listed. */
    vanished: `del-${tag}-vanished.DLT`,
    /** Discovered only, created after the adapter's first look: it sees it only after the delete. */
    late: `del-${tag}-late.DLT`,
  };
  // Discovery limited to this run's topics: the shared broker holds other runs' DLTs.
  const adapter = new KafkaAdapter(
    testConfig({ id: `del-${tag}`, dltPatterns: [`del-${tag}-*.DLT`], dlqs: [{ name: t.gone }, { name: t.kept }] }),
    { allManagedHeaders: MANAGED_HEADERS, handledStore: null },
  );

  beforeAll(async () => {
    for (const topic of [t.gone, t.kept, t.vanished]) await kit.createTopic(topic, 2);
    await kit.produce(
      t.gone,
      [0, 1].map((i) => ({ body: text(`gone-${i}`), partition: i % 2 })),
    );
    await kit.produce(
      t.kept,
      [0, 1, 2].map((i) => ({ body: text(`kept-${i}`), partition: i % 2 })),
    );
    await kit.produce(t.vanished, [{ body: text("vanished-0") }]);
  });
  afterAll(async () => {
    await adapter.close();
    await kit.cleanup();
  });

  const byName = (list: DlqSummary[]) => new Map(list.map((d) => [d.name, d]));
  const bodies = async (name: string) =>
    (await adapter.browse(name, { offset: 0, limit: 100 })).letters.map((l) => new TextDecoder().decode(l.body)).sort();

  it("lists, describes and browses the topics that still exist, and reports the deleted configured one as missing", async () => {
    // The adapter looks at every topic first: listed, described, browsed.
    const before = byName(await adapter.listDlqs());
    expect([...before.keys()]).toEqual([t.gone, t.kept, t.vanished]);
    expect([before.get(t.gone)?.depth, before.get(t.kept)?.depth, before.get(t.vanished)?.depth]).toEqual([2, 3, 1]);
    for (const name of [t.gone, t.kept, t.vanished])
      expect((await adapter.describeDlq(name)).partitions?.length).toBe(2);
    expect(await bodies(t.gone)).toEqual(["gone-0", "gone-1"]);
    expect(await bodies(t.vanished)).toEqual(["vanished-0"]);
    expect(await bodies(t.kept)).toEqual(["kept-0", "kept-1", "kept-2"]);

    // A new DLT appears (the kit's producer would hit the same kafkajs failure after the delete),
    // then someone else deletes two of the three the adapter has seen.
    await kit.createTopic(t.late, 1);
    await kit.produce(t.late, [{ body: text("late-0") }, { body: text("late-1") }]);
    const admin = await kit.getAdmin();
    await admin.deleteTopics({ topics: [t.gone, t.vanished], timeout: 10_000 });
    kit.topics.delete(t.gone);
    kit.topics.delete(t.vanished);
    for (let i = 0; i < 50 && (await admin.listTopics()).some((n) => n === t.gone || n === t.vanished); i++)
      await new Promise((r) => setTimeout(r, 200));

    const after = await adapter.listDlqs();
    expect(after.map((d) => d.name)).toEqual([t.gone, t.kept, t.late]);
    const listed = byName(after);
    expect(listed.get(t.gone)).toMatchObject({
      depth: null,
      source: "config",
      warnings: [expect.objectContaining({ code: "missing" })],
    });
    expect(listed.get(t.kept)).toMatchObject({ depth: 3, source: "config+discovered" });
    expect(listed.get(t.kept)?.partitions?.map((p) => p.letters)).toEqual([2, 1]);
    expect(listed.get(t.late)).toMatchObject({ depth: 2, source: "discovered" });
    // Configs are read again too (the facts come from DescribeConfigs).
    expect(listed.get(t.kept)?.facts.some((f) => f.name === "retention.ms")).toBe(true);

    const described = await adapter.describeDlq(t.kept);
    expect(described).toMatchObject({ depth: 3 });
    expect(described.partitions?.map((p) => [p.partition, p.letters])).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(described.facts.some((f) => f.name === "retention.ms")).toBe(true);
    expect(await bodies(t.kept)).toEqual(["kept-0", "kept-1", "kept-2"]);
    const streamed: string[] = [];
    for await (const l of adapter.stream(t.kept)) streamed.push(l.id);
    expect(streamed.sort()).toEqual(["0-0", "0-1", "1-0"]);
    expect((await adapter.getLetter(t.kept, "1-0"))?.id).toBe("1-0");

    expect((await adapter.describeDlq(t.late)).depth).toBe(2);
    expect(await bodies(t.late)).toEqual(["late-0", "late-1"]);

    for (const name of [t.gone, t.vanished]) {
      const err = await adapter.describeDlq(name).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BrokerError);
      expect((err as BrokerError).kind).toBe("not_found");
    }
  });
});
