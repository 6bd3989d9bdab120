import { randomUUID } from "node:crypto";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { redriveHandler } from "./handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * The redrive engine on SQS (ElasticMQ, the registry's local-sqs connection): letters dead-lettered
 * by the server's own redrive policy, scanned, then sampled, watched and redriven at a rate.
 */
const CONN = "local-sqs";
const N = 30;
const meta = () => ({ requestId: `rs-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new SqsKit(ELASTICMQ_ENDPOINT);
let operator: Actor;

beforeAll(async () => {
  const u = await createUser({ email: `op-${randomUUID().slice(0, 8)}@redrive-sqs.test`, role: "operator", password: "a-long-enough-password" });
  operator = { id: u.id, email: u.email, name: null, role: "operator" };
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/brokers/registry");
  await closeAllAdapters();
});

const worker = () => new JobWorker({ handlers: { redrive: redriveHandler({ returnCheckMs: 300 }) }, owner: `rs-${randomUUID().slice(0, 6)}`, leaseMs: 30_000 });

describe("redrive engine on SQS (ElasticMQ)", () => {
  it(
    "sample then bulk at a rate: every letter back in its source queue once, with the markers; the DLQ empty; ledger and audit per letter",
    async () => {
      const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(Array.from({ length: N }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`) })));
      const scanKind = `scan-rs-${randomUUID().slice(0, 8)}`;
      await jobStore().enqueue({ kind: scanKind as "scan", connectionId: CONN, queue: dlq, params: { acceptRisk: true } });
      await new JobWorker({ handlers: { [scanKind]: scanHandler() }, owner: scanKind, leaseMs: 30_000 }).runOnce();

      const selection = { kind: "filter", filter: {} };
      const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
      expect(preview.count).toBe(N);
      const r = await startRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection, fix: "sqs engine test", confirmedCount: N, watchSeconds: 1, sample: { count: 3 }, rate: 20, acceptRisk: true });
      await worker().runOnce();
      const afterSample = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
      expect(afterSample).toMatchObject({ stage: "awaiting_bulk", sampleVerdict: "clean" });
      expect(await kit.depth(sourceUrl)).toBe(3);
      await startBulk(operator, meta(), { jobId: r.id });
      const t0 = Date.now();
      await worker().runOnce();
      const secs = (Date.now() - t0) / 1000;
      expect((await jobStore().get(r.id))?.state).toBe("succeeded");
      expect(secs).toBeGreaterThan(((N - 3) / 20) * 0.5); // paced by the rate, not at full speed

      const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
      expect(rows.map((x) => x.state)).toEqual(Array(N).fill("moved"));
      expect(rows.filter((x) => x.stage === "sample")).toHaveLength(3);
      expect(await kit.depth(dlqUrl)).toBe(0);

      const got: Array<{ body: string; attrs: Record<string, string> }> = [];
      for (let i = 0; i < 20 && got.length < N; i++) {
        const { Messages } = await kit.sqs.send(new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageAttributeNames: ["All"] }));
        for (const m of Messages ?? []) got.push({ body: m.Body ?? "", attrs: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""])) });
      }
      expect(got.map((g) => g.body).sort()).toEqual(Array.from({ length: N }, (_, i) => `{"order":${i}}`).sort());
      for (const g of got) expect(g.attrs["x-dlq-redrive-id"] ?? g.attrs["x-dlq-redrive"]).toContain(r.id);
      expect(await getDb().auditEvent.count({ where: { operationId: r.id, scope: "letter" } })).toBe(N);
    },
    120_000,
  );
});
