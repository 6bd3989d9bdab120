import { randomUUID } from "node:crypto";
import { ChangeMessageVisibilityCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { cleanUp, newOperator, scanDlq } from "@/test/integration-kit";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
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
  operator = await newOperator("redrive-sqs");
});
afterAll(() => cleanUp(kit));

/** A worker that runs only this job (never one left by another test). */
const worker = (jobId: string) =>
  new JobWorker({
    handlers: { redrive: redriveHandler({ returnCheckMs: 300 }) },
    owner: `rs-${randomUUID().slice(0, 6)}`,
    leaseMs: 30_000,
    scope: { jobIds: [jobId] },
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(dlq: string, n: number, plan: Record<string, unknown>) {
  const selection = { kind: "filter", filter: {} };
  const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
  expect(preview.count).toBe(n);
  return startRedrive(operator, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    fix: "sqs engine test",
    confirmedCount: n,
    watchSeconds: 1,
    acceptRisk: true,
    ...plan,
  });
}

/** Everything in a queue, received and left hidden for a minute (bodies, group ids, attributes). */
async function receiveAll(url: string, n: number) {
  const got: Array<{ body: string; group: string | null; attrs: Record<string, string> }> = [];
  for (let i = 0; i < 20 && got.length < n; i++) {
    const { Messages } = await kit.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["MessageGroupId"],
      }),
    );
    for (const m of Messages ?? []) {
      got.push({
        body: m.Body ?? "",
        group: m.Attributes?.MessageGroupId ?? null,
        attrs: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""])),
      });
    }
  }
  return got;
}

describe("redrive engine on SQS (ElasticMQ)", () => {
  it("sample then bulk at a rate: every letter back in its source queue once, with the markers; the DLQ empty; ledger and audit per letter", async () => {
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(
      Array.from({ length: N }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`) })),
    );
    await scanDlq(CONN, dlq);

    const selection = { kind: "filter", filter: {} };
    const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.count).toBe(N);
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "sqs engine test",
      confirmedCount: N,
      watchSeconds: 1,
      sample: { count: 3 },
      rate: 20,
      acceptRisk: true,
    });
    await worker(r.id).runOnce();
    const afterSample = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
    // Nobody receives from the source queue here: its 3 copies wait there, nothing shows a reader
    // took them, so the sample is inconclusive and the rest goes with a reason.
    expect(afterSample).toMatchObject({ stage: "awaiting_bulk", sampleVerdict: "inconclusive" });
    expect(await kit.depth(sourceUrl)).toBe(3);
    await startBulk(operator, meta(), {
      jobId: r.id,
      continueAnywayReason: "Nobody receives from the source in this test",
    });
    const t0 = Date.now();
    await worker(r.id).runOnce();
    const secs = (Date.now() - t0) / 1000;
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
    expect(secs).toBeGreaterThan(((N - 3) / 20) * 0.5); // paced by the rate, not at full speed

    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    expect(rows.map((x) => x.state)).toEqual(Array(N).fill("moved"));
    expect(rows.filter((x) => x.stage === "sample")).toHaveLength(3);
    expect(await kit.depth(dlqUrl)).toBe(0);

    const got: Array<{ body: string; attrs: Record<string, string> }> = [];
    for (let i = 0; i < 20 && got.length < N; i++) {
      const { Messages } = await kit.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: sourceUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 60,
          MessageAttributeNames: ["All"],
        }),
      );
      for (const m of Messages ?? [])
        got.push({
          body: m.Body ?? "",
          attrs: Object.fromEntries(
            Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? ""]),
          ),
        });
    }
    expect(got.map((g) => g.body).sort()).toEqual(Array.from({ length: N }, (_, i) => `{"order":${i}}`).sort());
    for (const g of got) expect(g.attrs["x-dlq-redrive-id"] ?? g.attrs["x-dlq-redrive"]).toContain(r.id);
    expect(await getDb().auditEvent.count({ where: { operationId: r.id, scope: "letter" } })).toBe(N);
  }, 120_000);

  it("FIFO: a letter that fails holds back the later letters of its message group across batches and runs; other groups move in order", async () => {
    // Groups A and B interleaved: A0 B0 A1 B1 A2 B2 A3 B3, dead-lettered by the server in that order.
    const letters = Array.from({ length: 8 }, (_, i) => ({
      body: new TextEncoder().encode(`${"AB"[i % 2]}${Math.floor(i / 2)}`),
      groupId: "AB"[i % 2],
    }));
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(letters, { fifo: true });
    await scanDlq(CONN, dlq);
    // Sample of 1 (A0), then the rest at 4/s: batches of 2, so every later A letter is in another call.
    const r = await start(dlq, 8, { sample: { count: 1 }, rate: 4 });
    const rows0 = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    // A0's bytes "changed" since it was indexed: its checksum no longer matches.
    await getDb().redriveLetter.update({ where: { id: rows0[0].id }, data: { sha256: "0".repeat(64) } });

    await worker(r.id).runOnce();
    expect(await getDb().redriveLetter.findUniqueOrThrow({ where: { id: rows0[0].id } })).toMatchObject({
      state: "checksum_mismatch",
      orderingKey: "A",
    });
    // No sample copy reached the source queue: inconclusive, so the rest needs a reason.
    expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive.sampleVerdict).toBe("inconclusive");
    await startBulk(operator, meta(), {
      jobId: r.id,
      continueAnywayReason: "FIFO hold test: nobody receives the source",
    });
    await worker(r.id).runOnce(); // a new run: the held key comes from the ledger
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");

    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    expect(rows.map((x) => [x.orderingKey, x.state])).toEqual([
      ["A", "checksum_mismatch"],
      ["B", "moved"],
      ["A", "failed"],
      ["B", "moved"],
      ["A", "failed"],
      ["B", "moved"],
      ["A", "failed"],
      ["B", "moved"],
    ]);
    for (const x of rows.filter((y) => y.state === "failed")) {
      expect(x.reason).toMatch(/^Held back: an earlier letter with the same key failed \(key "A"\)/);
      expect(x.attempts).toBe(1); // held back on a reachable broker: a letter's outcome, not retried
    }
    const moved = await receiveAll(sourceUrl, 4);
    expect(moved.map((m) => m.body)).toEqual(["B0", "B1", "B2", "B3"]);
    expect(
      moved.every((m) => m.group === "B" && (m.attrs["x-dlq-redrive-id"] ?? m.attrs["x-dlq-redrive"]).includes(r.id)),
    ).toBe(true);
    // Group A is still in the DLQ, in its order.
    const left = await receiveAll(dlqUrl, 4);
    expect(left.map((m) => m.body)).toEqual(["A0", "A1", "A2", "A3"]);
  }, 120_000);

  it("a sample letter hidden by another reader when it is asked for is still in the DLQ (not missing) at first, asked for again before the job ends, and moved", async () => {
    const n = 12;
    const { dlq, dlqUrl, sourceUrl } = await kit.dlqByRedrive(
      Array.from({ length: n }, (_, i) => ({ body: new TextEncoder().encode(`{"order":${i}}`) })),
    );
    await scanDlq(CONN, dlq);
    const r = await start(dlq, n, { sample: { count: 3 }, rate: 20 });
    const sampleIds = new Set(
      (await getDb().redriveLetter.findMany({ where: { jobId: r.id, seq: { lte: 3 } } })).map((x) => x.messageId),
    );
    // Another reader receives the DLQ and keeps one sample letter hidden for 2 s; the rest it lets go.
    let hiddenId: string | null = null;
    let hiddenAt = 0;
    for (let i = 0; i < 10 && !hiddenId; i++) {
      const { Messages } = await kit.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30 }),
      );
      for (const m of Messages ?? []) {
        const keep = !hiddenId && sampleIds.has(m.MessageId!);
        if (keep) {
          hiddenId = m.MessageId!;
          hiddenAt = Date.now();
        }
        await kit.sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: dlqUrl,
            ReceiptHandle: m.ReceiptHandle!,
            VisibilityTimeout: keep ? 2 : 0,
          }),
        );
      }
    }
    expect(hiddenId).not.toBeNull();

    await worker(r.id).runOnce();
    const hidden = () => getDb().redriveLetter.findFirstOrThrow({ where: { jobId: r.id, messageId: hiddenId! } });
    // Not "missing": the look saw another reader hold a letter, so it is still in the DLQ, not moved.
    expect(await hidden()).toMatchObject({ stage: "sample", state: "failed", attempts: 1 });
    expect((await hidden()).reason).toMatch(/^Still in the DLQ, hidden by another reader/);
    expect((await getRedrive(operator, meta(), { jobId: r.id })).counts).toMatchObject({ moved: 2, failed: 1 });

    await sleep(Math.max(0, hiddenAt + 2500 - Date.now())); // the other reader's hold runs out
    expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive.sampleVerdict).toBe("inconclusive");
    await startBulk(operator, meta(), {
      jobId: r.id,
      continueAnywayReason: "Nobody receives from the source in this test",
    });
    await worker(r.id).runOnce();
    expect((await jobStore().get(r.id))?.state).toBe("succeeded");
    expect(await hidden()).toMatchObject({ state: "moved", attempts: 2, reason: null }); // found again by the verification pass
    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id } });
    expect(rows.map((x) => x.state)).toEqual(Array(n).fill("moved"));
    expect(await kit.depth(dlqUrl)).toBe(0);
    expect((await receiveAll(sourceUrl, n)).map((m) => m.body).sort()).toEqual(
      Array.from({ length: n }, (_, i) => `{"order":${i}}`).sort(),
    );
  }, 120_000);
});
