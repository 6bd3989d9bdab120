import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { configureShareGroupDlq, rejectWithShareConsumer } from "@/lib/brokers/kafka/share-consumer-fixture";
import { KafkaKit } from "@/lib/brokers/kafka/test-kit";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { testActors } from "@/test/console-config";
import { redriveHandler } from "./handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * The redrive engine on share-group dead letters (KIP-1191), on the real Kafka 4.4 and the
 * registry's local-kafka connection: a real console share consumer rejects three records, the broker
 * writes metadata-only records to the group's DLQ topic (`dlq.` + source: the default patterns find
 * it), a scan indexes them, and a redrive to their origin (sample of one, then the rest) puts each
 * original record back on its topic, with its key, value and headers and the job's markers; the
 * ledger has every letter moved.
 */
const CONN = "local-kafka";
const meta = () => ({ requestId: `rs-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new KafkaKit();
let operator: Actor;

beforeAll(async () => {
  ({ operator } = await testActors("redrive-share.test", ["operator"]));
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

const worker = (
  kind: string,
  handler: ConstructorParameters<typeof JobWorker>[0]["handlers"][string],
  jobId?: string,
) =>
  new JobWorker({
    handlers: { [kind]: handler },
    owner: `rs-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    ...(jobId ? { scope: { jobIds: [jobId] } } : {}),
  });

describe("redrive engine on share-group dead letters", () => {
  it("scans the share group's DLQ topic and redrives the originals to their topic: sample, then the rest; every letter moved", async () => {
    const source = await kit.createTopic(kit.name("billing"));
    const dlq = await kit.createTopic(`dlq.${source}`, 1, { "errors.deadletterqueue.group.enable": "true" });
    await kit.produce(
      source,
      [0, 1, 2].map((i) => ({
        body: new TextEncoder().encode(`{"invoice":${i}}`),
        key: `acct-${i}`,
        headers: { "x-app": `billing-${i}` },
      })),
    );
    const group = `${kit.prefix}-billing`;
    kit.groups.add(group);
    await configureShareGroupDlq("127.0.0.1:9092", group, { dlqTopic: dlq });
    await rejectWithShareConsumer("127.0.0.1:9092", source, group, 3);
    const admin = await kit.getAdmin();
    for (let i = 0; i < 100 && Number((await admin.fetchTopicOffsets(dlq))[0].high) < 3; i++)
      await new Promise((r) => setTimeout(r, 100));

    const scanKind = `scan-rs-${randomUUID().slice(0, 8)}`;
    const scan = await jobStore().enqueue({ kind: scanKind as "scan", connectionId: CONN, queue: dlq, params: {} });
    await worker(scanKind, scanHandler()).runOnce();
    expect((await jobStore().get(scan.id))?.state).toBe("succeeded");

    const selection = { kind: "filter", filter: {} };
    expect((await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection })).count).toBe(3);
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      target: { kind: "origin" },
      fix: "billing parser fixed in 4.2.1",
      confirmedCount: 3,
      watchSeconds: 1,
      sample: { count: 1 },
      rate: 600,
    });
    await worker("redrive", redriveHandler({ returnCheckMs: 300 }), r.id).runOnce();
    // Nobody reads the source topic here: nothing shows a reader took the copy, so the sample is
    // inconclusive and the rest goes only with "continue anyway" and a reason.
    expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
    });
    await startBulk(operator, meta(), {
      jobId: r.id,
      continueAnywayReason: "Nobody consumes the billing topic in this test",
    });
    await worker("redrive", redriveHandler({ returnCheckMs: 300 }), r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");

    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    expect(rows.map((x) => x.state)).toEqual(["moved", "moved", "moved"]);
    // The source now holds the three originals and their three redriven copies: same key, value and headers, plus the markers.
    const all = await kit.readAll(source);
    const copies = all.filter((m) => m.headers[REDRIVE_HEADERS.redriveId] === r.id);
    expect(copies.map((m) => [m.key, m.value, m.headers["x-app"]]).sort()).toEqual(
      [0, 1, 2].map((i) => [`acct-${i}`, `{"invoice":${i}}`, `billing-${i}`]),
    );
    for (const c of copies) expect(Object.keys(c.headers).some((h) => h.startsWith("__dlq.errors."))).toBe(false);
  }, 120_000);
});
