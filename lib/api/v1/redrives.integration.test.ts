import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { ELASTICMQ_ENDPOINT, SqsKit } from "@/lib/brokers/sqs/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { redriveHandler, type RedriveDeps } from "@/lib/redrive/handler";
import { scanHandler } from "@/lib/triage/scan";
import { auditRowsOf, callV1, expectDocumented, v1Users, type V1Handler, type V1User } from "@/test/api-v1";
import * as plan from "@/app/api/v1/redrives/plan/route";
import * as redrives from "@/app/api/v1/redrives/route";
import * as one from "@/app/api/v1/redrives/[id]/route";
import * as bulk from "@/app/api/v1/redrives/[id]/bulk/route";
import * as pause from "@/app/api/v1/redrives/[id]/pause/route";
import * as resume from "@/app/api/v1/redrives/[id]/resume/route";
import * as cancel from "@/app/api/v1/redrives/[id]/cancel/route";
import * as jobLedger from "@/app/api/v1/jobs/[id]/ledger/route";

/**
 * A redrive driven through /api/v1 only (after seeding: letters dead-lettered by real rejection on
 * the real RabbitMQ and scanned into the triage index), the way a script would: plan, start with the
 * confirmed count, poll to the sample verdict, start the rest, poll to the end, read the ledger by
 * cursor; then the brokers are read to see where the letters really are. The job worker runs in this
 * process, scoped to the test's own jobs.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const kit = new RabbitKit();
const sqsKit = new SqsKit(ELASTICMQ_ENDPOINT);
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
let u: Record<"viewer" | "operator" | "admin", V1User>;
const workers: JobWorker[] = [];

beforeAll(async () => {
  u = await v1Users("redrives-v1", ["viewer", "operator", "admin"]);
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await kit.cleanup();
  await sqsKit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function scan(connectionId: string, dlq: string) {
  const kind = `scan-v1rd-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId,
    queue: dlq,
    params: { acceptRisk: true },
  });
  await new JobWorker({
    handlers: { [kind]: scanHandler() },
    owner: `scan-${kind}`,
    leaseMs: 30_000,
    scope: { jobIds: [job.id] },
  }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

async function seeded(n: number) {
  const letters = Array.from({ length: n }, (_, i) => ({
    body: enc(`{"order":${i}}`),
    messageId: `v1-${i}`,
    headers: { "x-exception-class": "java.net.SocketTimeoutException" },
  }));
  const { dlq, source } = await kit.dlqByReject(letters);
  await scan(CONN, dlq);
  return { dlq, source };
}

/** Runs this redrive (and only it) in the background, as the console's worker would. */
function runWorker(jobId: string) {
  const w = new JobWorker({
    handlers: { redrive: redriveHandler(FAST) },
    owner: `v1rd-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });
  w.start();
  workers.push(w);
  return w;
}

const post = (h: V1Handler, url: string, token: string, json: unknown, params?: Record<string, string>) =>
  callV1(h, url, { token, json, params });
const get = (h: V1Handler, url: string, token: string, params?: Record<string, string>) =>
  callV1(h, url, { token, params });

/** Polls GET /api/v1/redrives/{id} until `done` says so. */
async function pollRedrive(id: string, done: (r: Record<string, any>) => boolean, ms = 45_000) {
  const until = Date.now() + ms;
  for (;;) {
    const r = await get(one.GET as V1Handler, `/api/v1/redrives/${id}?limit=1`, u.viewer.token, { id });
    expect(r.status).toBe(200);
    if (done(r.body.redrive)) {
      await expectDocumented("get", "/api/v1/redrives/{id}", r.res, r.body);
      return r.body;
    }
    if (Date.now() > until)
      throw new Error(
        `redrive ${id} still ${JSON.stringify({ state: r.body.redrive.state, stage: r.body.redrive.stage })}`,
      );
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Everything in a queue, read without taking it (consume without ack, then close). */
async function peek(queue: string, expected: number): Promise<amqp.ConsumeMessage[]> {
  await kit.waitDepth(queue, expected);
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const out: amqp.ConsumeMessage[] = [];
  await new Promise<void>((resolve) => {
    void ch.consume(queue, (m) => {
      if (m) out.push(m);
      if (out.length === expected) resolve();
    });
  });
  await ch.close();
  await conn.close();
  return out;
}

describe("redrives through /api/v1 on RabbitMQ", () => {
  it("plans, refuses a changed count (nothing moves), samples, starts the rest, and ends with every letter at its origin; the ledger pages by cursor", async () => {
    const N = 23;
    const { dlq, source } = await seeded(N);
    const selection = { kind: "filter", filter: {} };

    const refused = await post(plan.POST as V1Handler, "/api/v1/redrives/plan", u.viewer.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
    });
    expect(refused.status).toBe(403);
    await expectDocumented("post", "/api/v1/redrives/plan", refused.res, refused.body);

    const p = await post(plan.POST as V1Handler, "/api/v1/redrives/plan", u.operator.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
    });
    expect(p.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/plan", p.res, p.body);
    expect(p.body).toMatchObject({
      connectionId: CONN,
      queue: dlq,
      count: N,
      scope: "every letter in the DLQ",
      orderedStream: false,
    });

    const start = {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "Deployed orders 2.3.2 (timeout raised)",
      watchSeconds: 1,
      sample: { count: 4 },
      rate: 200,
    };
    // A script that saw another count redrives nothing: the DLQ still holds every letter.
    const wrong = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.operator.token, {
      ...start,
      confirmedCount: N + 2,
    });
    expect(wrong.status).toBe(409);
    await expectDocumented("post", "/api/v1/redrives", wrong.res, wrong.body);
    expect(wrong.body).toMatchObject({ code: "conflict:count", count: N });
    expect(wrong.body.detail).toContain(`now holds ${N} letters`);
    expect(await getDb().redrivePlan.count({ where: { queue: dlq } })).toBe(0);
    expect(await kit.depth(dlq)).toBe(N);
    expect(await kit.depth(source)).toBe(0);

    const bad = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.operator.token, {
      ...start,
      fix: undefined,
      confirmedCount: N,
    });
    expect(bad.status).toBe(400);
    await expectDocumented("post", "/api/v1/redrives", bad.res, bad.body);

    const started = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.operator.token, {
      ...start,
      confirmedCount: N,
    });
    expect(started.status).toBe(202);
    await expectDocumented("post", "/api/v1/redrives", started.res, started.body);
    expect(started.body).toMatchObject({
      state: "queued",
      stage: "sample",
      sampleVerdict: null,
      plan: { total: N, sampleSize: 4, fix: start.fix },
      createdBy: u.operator.actor.email,
    });
    const id: string = started.body.id;
    expect((await auditRowsOf(started.requestId)).map((r) => [r.action, r.outcome, r.operationId])).toContainEqual([
      "redrive.start",
      "success",
      id,
    ]);

    // Stage 2 before the verdict is a conflict.
    const early = await post(bulk.POST as V1Handler, `/api/v1/redrives/${id}/bulk`, u.operator.token, {}, { id });
    expect(early.status).toBe(409);
    await expectDocumented("post", "/api/v1/redrives/{id}/bulk", early.res, early.body);

    runWorker(id);
    const verdict = await pollRedrive(id, (r) => r.sampleVerdict !== null && r.state === "paused");
    // Nobody consumes the origin here: none came back, but nothing shows a reader took them, so the
    // verdict is inconclusive and the rest needs "continue anyway" with a reason.
    expect(verdict.redrive).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      sampleReturned: 0,
      bulk: { ready: true, needsOverride: false, needsReason: true },
    });
    expect(verdict.counts).toMatchObject({ moved: 4, pending: N - 4 });
    expect(await kit.depth(source)).toBe(4);
    expect(await kit.depth(dlq)).toBe(N - 4);

    // An override reason needs redrive:override, which an operator lacks (asked by the use case, audited).
    const override = await post(
      bulk.POST as V1Handler,
      `/api/v1/redrives/${id}/bulk`,
      u.operator.token,
      { overrideReason: "The returns were a flaky consumer" },
      { id },
    );
    expect(override.status).toBe(403);
    expect(override.body).toMatchObject({ code: "forbidden:redrive:override" });
    expect((await auditRowsOf(override.requestId)).map((r) => [r.action, r.outcome])).toEqual([
      ["redrive.bulk_start", "denied"],
    ]);

    // Without a reason the rest does not start (documented 400); nothing moves.
    const bare = await post(bulk.POST as V1Handler, `/api/v1/redrives/${id}/bulk`, u.operator.token, {}, { id });
    expect(bare.status).toBe(400);
    await expectDocumented("post", "/api/v1/redrives/{id}/bulk", bare.res, bare.body);
    expect(bare.body).toMatchObject({ code: "bad_request:continue-reason" });
    expect(await kit.depth(dlq)).toBe(N - 4);

    const reason = "orders-consumer is scaled to 0 during this test; it reads them later";
    const b = await post(
      bulk.POST as V1Handler,
      `/api/v1/redrives/${id}/bulk`,
      u.operator.token,
      { continueAnywayReason: reason },
      { id },
    );
    expect(b.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/{id}/bulk", b.res, b.body);
    expect(b.body).toMatchObject({
      id,
      stage: "bulk",
      bulkStartedBy: u.operator.actor.email,
      bulkOverrideReason: reason,
    });
    expect((await auditRowsOf(b.requestId)).map((r) => [r.action, r.outcome, r.operationId])).toEqual(
      expect.arrayContaining([
        ["redrive.continue_anyway", "success", id],
        ["redrive.bulk_start", "success", id],
      ]),
    );

    const end = await pollRedrive(id, (r) => ["succeeded", "failed", "cancelled"].includes(r.state));
    expect(end.redrive).toMatchObject({
      state: "succeeded",
      stage: "done",
      progress: { redriven: N, failed: 0, pending: 0 },
    });
    expect(end.counts).toMatchObject({ moved: N });

    // The ledger by cursor, two ways: every letter once.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/v1/jobs/${id}/ledger?limit=5${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await get(jobLedger.GET as V1Handler, url, u.viewer.token, { id });
      expect(page.status).toBe(200);
      await expectDocumented("get", "/api/v1/jobs/{id}/ledger", page.res, page.body);
      expect(page.body.kind).toBe("redrive");
      for (const row of page.body.items) {
        expect(row.state).toBe("moved");
        seen.push(row.letterId);
      }
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(N / 5));
    expect(seen).toHaveLength(N);
    expect(new Set(seen).size).toBe(N);

    const byAfter: string[] = [];
    let after: number | null = 0;
    while (after !== null) {
      const page = await get(one.GET as V1Handler, `/api/v1/redrives/${id}?limit=10&after=${after}`, u.viewer.token, {
        id,
      });
      expect(page.status).toBe(200);
      await expectDocumented("get", "/api/v1/redrives/{id}", page.res, page.body);
      byAfter.push(...page.body.ledger.map((r: { letterId: string }) => r.letterId));
      after = page.body.nextAfter;
    }
    expect(byAfter).toEqual(seen);

    // The brokers: every letter at its origin, marked with this redrive; none left in the DLQ.
    const arrived = await peek(source, N);
    expect(await kit.depth(dlq)).toBe(0);
    expect(arrived.map((m) => m.properties.messageId).sort()).toEqual(
      Array.from({ length: N }, (_, i) => `v1-${i}`).sort(),
    );
    for (const m of arrived) expect(m.properties.headers?.["x-dlq-redrive-id"]).toBe(id);

    const missing = await get(one.GET as V1Handler, `/api/v1/redrives/${randomUUID()}`, u.viewer.token, {
      id: randomUUID(),
    });
    expect(missing.status).toBe(404);
    await expectDocumented("get", "/api/v1/redrives/{id}", missing.res, missing.body);
  }, 120_000);

  it("pauses, resumes and cancels in the documented shape; cancelled letters stay in the DLQ", async () => {
    const N = 6;
    const { dlq, source } = await seeded(N);
    const selection = { kind: "filter", filter: {} };
    const p = await post(plan.POST as V1Handler, "/api/v1/redrives/plan", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
    });
    const started = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.admin.token, {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "Config fix 41",
      confirmedCount: p.body.count,
      sample: { count: 2 },
      watchSeconds: 60,
    });
    expect(started.status).toBe(202);
    const id: string = started.body.id;

    const notPaused = await post(
      resume.POST as V1Handler,
      `/api/v1/redrives/${id}/resume`,
      u.operator.token,
      {},
      { id },
    );
    expect(notPaused.status).toBe(409);
    await expectDocumented("post", "/api/v1/redrives/{id}/resume", notPaused.res, notPaused.body);
    expect(notPaused.body).toMatchObject({ code: "conflict:redrive" });

    runWorker(id);
    await pollRedrive(id, (r) => r.stage === "watching");
    const paused = await post(pause.POST as V1Handler, `/api/v1/redrives/${id}/pause`, u.operator.token, {}, { id });
    expect(paused.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/{id}/pause", paused.res, paused.body);
    expect(paused.body).toMatchObject({ id, pauseRequested: true });
    expect((await auditRowsOf(paused.requestId)).map((r) => [r.action, r.outcome, r.operationId])).toEqual([
      ["redrive.pause", "success", id],
    ]);
    const stopped = await pollRedrive(id, (r) => r.state === "paused");
    expect(stopped.redrive.pauseReason).toContain(u.operator.actor.email);

    const resumed = await post(resume.POST as V1Handler, `/api/v1/redrives/${id}/resume`, u.operator.token, {}, { id });
    expect(resumed.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/{id}/resume", resumed.res, resumed.body);
    expect(["running", "queued"]).toContain(resumed.body.state);

    const viewerCancel = await post(
      cancel.POST as V1Handler,
      `/api/v1/redrives/${id}/cancel`,
      u.viewer.token,
      {},
      { id },
    );
    expect(viewerCancel.status).toBe(403);
    await expectDocumented("post", "/api/v1/redrives/{id}/cancel", viewerCancel.res, viewerCancel.body);

    const cancelled = await post(
      cancel.POST as V1Handler,
      `/api/v1/redrives/${id}/cancel`,
      u.operator.token,
      {},
      { id },
    );
    expect(cancelled.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/{id}/cancel", cancelled.res, cancelled.body);
    expect(cancelled.body).toMatchObject({ id, cancelRequested: true });
    expect(["cancelling", "cancelled"]).toContain(cancelled.body.state);
    const end = await pollRedrive(id, (r) => r.state === "cancelled");
    expect(end.counts).toMatchObject({ moved: 2, pending: N - 2 });
    // The sample left; the rest never moved.
    expect(await kit.depth(source)).toBe(2);
    expect(await kit.depth(dlq)).toBe(N - 2);

    const again = await post(pause.POST as V1Handler, `/api/v1/redrives/${id}/pause`, u.operator.token, {}, { id });
    expect(again.status).toBe(409);
    await expectDocumented("post", "/api/v1/redrives/{id}/pause", again.res, again.body);
  }, 120_000);

  it("lists redrives newest first by cursor, without repeats", async () => {
    // The two redrives above are on this connection, so there are at least two pages of one.
    const first = await get(redrives.GET as V1Handler, `/api/v1/redrives?connectionId=${CONN}&limit=1`, u.viewer.token);
    expect(first.status).toBe(200);
    await expectDocumented("get", "/api/v1/redrives", first.res, first.body);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await get(
      redrives.GET as V1Handler,
      `/api/v1/redrives?connectionId=${CONN}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      u.viewer.token,
    );
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
    expect(Date.parse(second.body.items[0].createdAt)).toBeLessThanOrEqual(Date.parse(first.body.items[0].createdAt));

    const badCursor = await get(redrives.GET as V1Handler, `/api/v1/redrives?cursor=not-a-cursor`, u.viewer.token);
    expect(badCursor.status).toBe(400);
    await expectDocumented("get", "/api/v1/redrives", badCursor.res, badCursor.body);
  });

  it("redrives an SQS DLQ (ElasticMQ) the same way: a changed count moves nothing, then every letter back in its source queue", async () => {
    const N = 8;
    const { dlq, dlqUrl, sourceUrl } = await sqsKit.dlqByRedrive(
      Array.from({ length: N }, (_, i) => ({ body: enc(`{"sqs":${i}}`) })),
    );
    await scan("local-sqs", dlq);
    const selection = { kind: "filter", filter: {} };
    const p = await post(plan.POST as V1Handler, "/api/v1/redrives/plan", u.operator.token, {
      connectionId: "local-sqs",
      queue: dlq,
      selection,
    });
    expect(p.status).toBe(200);
    await expectDocumented("post", "/api/v1/redrives/plan", p.res, p.body);
    expect(p.body.count).toBe(N);
    // Reading an SQS DLQ that is itself a redrive source counts against its letters: the start accepts that risk.
    const start = {
      connectionId: "local-sqs",
      queue: dlq,
      selection,
      fix: "sqs consumer fixed",
      watchSeconds: 1,
      sample: { count: 2 },
      rate: 100,
      acceptRisk: true,
    };
    const wrong = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.operator.token, {
      ...start,
      confirmedCount: N - 3,
    });
    expect(wrong.status).toBe(409);
    await expectDocumented("post", "/api/v1/redrives", wrong.res, wrong.body);
    expect(await sqsKit.count(dlqUrl)).toBe(N);
    expect(await sqsKit.count(sourceUrl)).toBe(0);

    const started = await post(redrives.POST as V1Handler, "/api/v1/redrives", u.operator.token, {
      ...start,
      confirmedCount: N,
    });
    expect(started.status).toBe(202);
    const id: string = started.body.id;
    runWorker(id);
    const verdict = await pollRedrive(id, (r) => r.sampleVerdict !== null && r.state === "paused");
    // Nobody receives from the source queue: inconclusive, so the rest goes with a reason.
    expect(verdict.redrive).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      bulk: { ready: true, needsReason: true },
    });
    expect(
      (
        await post(
          bulk.POST as V1Handler,
          `/api/v1/redrives/${id}/bulk`,
          u.operator.token,
          { continueAnywayReason: "Nobody receives from the source queue in this test" },
          { id },
        )
      ).status,
    ).toBe(200);
    const end = await pollRedrive(id, (r) => ["succeeded", "failed", "cancelled"].includes(r.state));
    expect(end.redrive.state).toBe("succeeded");
    expect(end.counts).toMatchObject({ moved: N });

    expect(await sqsKit.count(dlqUrl)).toBe(0);
    const bodies: string[] = [];
    for (let i = 0; i < 20 && bodies.length < N; i++) {
      const { Messages } = await sqsKit.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
      );
      bodies.push(...(Messages ?? []).map((m) => m.Body ?? ""));
    }
    expect(bodies.sort()).toEqual(Array.from({ length: N }, (_, i) => `{"sqs":${i}}`).sort());
  }, 120_000);
});
