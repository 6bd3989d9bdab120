import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { KafkaKit } from "@/lib/brokers/kafka/test-kit";
import { REDRIVE_HEADERS } from "@/lib/brokers/contract/markers";
import { getDb } from "@/lib/db";
import { cleanUp, newOperator, scanDlq } from "@/test/integration-kit";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler } from "./handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * The redrive engine on the real Kafka (the registry's local-kafka connection): a Spring-style DLT
 * scanned into the index, then sampled, watched and redriven through the use cases and the job
 * worker. Ordering across calls: a letter whose key failed earlier in the job is held back, so the
 * key's later letters are never moved past it (MoveOptions.heldKeys).
 */
const CONN = "local-kafka";
const meta = () => ({ requestId: `rk-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new KafkaKit();
let operator: Actor;
const text = (s: string) => new TextEncoder().encode(s);

beforeAll(async () => {
  operator = await newOperator("redrive-kafka");
});
afterAll(() => cleanUp(kit));

/** A worker that runs only this job (never one left by another test). */
const worker = (jobId: string) =>
  new JobWorker({
    handlers: { redrive: redriveHandler({ returnCheckMs: 300 }) },
    owner: `rk-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    scope: { jobIds: [jobId] },
  });

describe("redrive engine on Kafka", () => {
  it("sample then bulk at a rate (one letter per call): a key whose letter failed in the sample is held back in every later call; other keys move", async () => {
    // Offset 0 (key a) is 2 MB: the target topic (1 MiB limit) refuses it. Keys: a b a c a b.
    const big = new Uint8Array(2 * 1024 * 1024).fill(7);
    const keys = ["a", "b", "a", "c", "a", "b"];
    const { dlt } = await kit.springDlt(keys.map((key, i) => ({ body: i === 0 ? big : text(`seq-${i}`), key })));
    const target = await kit.createTopic(kit.name("small"), 1, { "max.message.bytes": String(1024 * 1024) });
    await scanDlq(CONN, dlt);
    const selection = { kind: "filter", filter: {} };
    const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlt, selection });
    expect(preview.count).toBe(6);
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlt,
      selection,
      target: { kind: "queue", name: target },
      fix: "engine held-keys test",
      confirmedCount: 6,
      watchSeconds: 1,
      sample: { count: 1 },
      rate: 2, // batches of one letter: every later letter is its own moveLetters call
      acceptRisk: true,
    });
    await worker(r.id).runOnce();
    const afterSample = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
    // The sample's one letter failed (too large), so no copy reached the target: nothing shows a
    // reader took the sample, the verdict is inconclusive and the rest needs a reason.
    expect(afterSample).toMatchObject({ stage: "awaiting_bulk", sampleVerdict: "inconclusive" });
    await startBulk(operator, meta(), { jobId: r.id, continueAnywayReason: "Held-keys test: nobody reads the target" });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");

    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    expect(rows.map((x) => [x.letterId, x.state, x.orderingKey])).toEqual([
      ["0-0", "failed", "a"],
      ["0-1", "moved", "b"],
      ["0-2", "failed", "a"],
      ["0-3", "moved", "c"],
      ["0-4", "failed", "a"],
      ["0-5", "moved", "b"],
    ]);
    expect(rows[0].reason).toMatch(/too large/);
    for (const i of [2, 4]) expect(rows[i].reason).toMatch(/^Held back: an earlier letter with the same key failed/);

    // Over the broker: only b, c, b arrived, in DLT order, with the job's markers.
    const admin = await kit.getAdmin();
    const [o] = await admin.fetchTopicOffsets(target);
    expect(Number(o.high) - Number(o.low)).toBe(3);
    const consumer = kit.kafka.consumer({ groupId: `rk-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic: target, fromBeginning: true });
    const got: Array<{ key: string; value: string; job: string }> = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          got.push({
            key: String(message.key),
            value: String(message.value),
            job: String(message.headers?.[REDRIVE_HEADERS.redriveId]),
          });
          if (got.length === 3) resolve();
        },
      });
    });
    await consumer.disconnect();
    expect(got).toEqual([
      { key: "b", value: "seq-1", job: r.id },
      { key: "c", value: "seq-3", job: r.id },
      { key: "b", value: "seq-5", job: r.id },
    ]);
  }, 120_000);
});
