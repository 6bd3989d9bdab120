import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { getAdapter } from "@/lib/connections/registry";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import type { BrokerAdapter } from "@/lib/brokers/contract/adapter";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { moveWindowFor } from "./token-bucket";
import { redriveHandler, type RedriveDeps } from "./handler";
import {
  cancelRedrive,
  getRedrive,
  pauseRedrive,
  planRedrive,
  resumeRedrive,
  startBulk,
  startRedrive,
} from "./use-cases";

/**
 * The redrive engine end to end on the real RabbitMQ (the registry's local-rabbitmq connection and
 * its real mover): letters dead-lettered by real rejection, scanned into the triage index, then
 * sampled, watched and redriven through the use cases and the job worker.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `rd-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"viewer" | "operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };

beforeAll(async () => {
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@redrive.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

const letters = (n: number, over: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({
    body: enc(`{"order":${i}}`),
    messageId: `m-${i}`,
    headers: { "x-exception-class": "java.net.SocketTimeoutException", ...over(i) },
  }));

async function scan(queue: string) {
  const kind = `scan-rd-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: CONN,
    queue,
    params: { acceptRisk: true },
  });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

async function seeded(n: number, over?: (i: number) => Record<string, unknown>) {
  const { dlq, source } = await kit.dlqByReject(letters(n, over));
  await scan(dlq);
  return { dlq, source };
}

/** A worker that runs only this job (never one left by another test). */
const worker = (deps: Partial<RedriveDeps>, jobId: string) =>
  new JobWorker({
    handlers: { redrive: redriveHandler(deps) },
    owner: `rd-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });

async function start(dlq: string, plan: Record<string, unknown> = {}) {
  const selection = { kind: "filter", filter: {} };
  const preview = await planRedrive(actors.operator, meta(), { connectionId: CONN, queue: dlq, selection });
  return startRedrive(actors.operator, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    fix: "Deployed orders 2.3.2 (timeout raised)",
    confirmedCount: preview.count,
    watchSeconds: 1,
    ...plan,
  });
}

/**
 * Nobody consumes these tests' origins, so a sample's verdict is inconclusive: the rest
 * starts only with "continue anyway" and a reason, as an operator would give it.
 */
const CONTINUE_REASON = "Nothing consumes the origin in this test";
const continueAnyway = (jobId: string) =>
  startBulk(actors.operator, meta(), { jobId, continueAnywayReason: CONTINUE_REASON });

/** Everything in a queue, read without taking it (consume without ack, then close). */
async function peek(queue: string, expected: number): Promise<amqp.ConsumeMessage[]> {
  await kit.waitDepth(queue, expected);
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const out: amqp.ConsumeMessage[] = [];
  await new Promise<void>((resolve) => {
    if (expected === 0) return resolve();
    void ch.consume(queue, (m) => {
      if (m) out.push(m);
      if (out.length === expected) resolve();
    });
  });
  await ch.close();
  await conn.close();
  return out;
}

async function waitState(jobId: string, states: string[], ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const j = (await jobStore().get(jobId))!;
    if (states.includes(j.state)) return j;
    if (Date.now() > until) throw new Error(`job ${jobId} is ${j.state}, expected ${states.join("|")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ledgerStates = async (jobId: string) =>
  Object.fromEntries(
    (
      await getDb().$queryRawUnsafe<Array<{ state: string; n: number }>>(
        `SELECT state, count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid GROUP BY state`,
        jobId,
      )
    ).map((r) => [r.state, r.n]),
  );

/** Letters still pending (never sent) whose row nevertheless counts an attempt. */
const pendingTried = async (jobId: string) =>
  (
    await getDb().$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid AND state = 'pending' AND attempts > 0`,
      jobId,
    )
  )[0].n;

describe("redrive on RabbitMQ", () => {
  it("samples, watches (inconclusive: nobody consumes the origin), continues anyway with a reason, then redrives the rest at the rate: every letter at its origin with markers, ledger and audit per letter", async () => {
    const { dlq, source } = await seeded(30);
    const preview = await planRedrive(actors.operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection: { kind: "filter", filter: {} },
    });
    expect(preview).toMatchObject({ count: 30, scope: "every letter in the DLQ", orderedStream: false });
    expect(preview.nativeMoveNote).toMatch(/no sample/);
    await expect(
      startRedrive(actors.operator, meta(), {
        connectionId: CONN,
        queue: dlq,
        selection: { kind: "filter", filter: {} },
        fix: "x fixed",
        confirmedCount: 29,
      }),
    ).rejects.toMatchObject({ code: "conflict:count" });
    await expect(
      startRedrive(actors.operator, meta(), {
        connectionId: CONN,
        queue: dlq,
        selection: { kind: "filter", filter: {} },
        confirmedCount: 30,
      }),
    ).rejects.toMatchObject({ code: "bad_request:redrive" });

    const r = await start(dlq, { rate: 20 });
    expect(r).toMatchObject({ state: "queued", stage: "sample", plan: { total: 30, sampleSize: 5 } });
    await worker(FAST, r.id).runOnce(); // sample, watch 1 s, pause with the verdict
    let v = (await getRedrive(actors.viewer, meta(), { jobId: r.id })).redrive;
    expect(v).toMatchObject({
      state: "paused",
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
      bulk: { ready: true, needsOverride: false, needsReason: true },
    });
    expect(v.pauseReason).toMatch(/^Sample inconclusive: none of the 5 sample letters came back within 1 s/);
    expect(await kit.depth(source)).toBe(5);
    expect(await kit.depth(dlq)).toBe(25);

    // Without a reason the rest does not start; with one it does, audited.
    await expect(startBulk(actors.operator, meta(), { jobId: r.id })).rejects.toMatchObject({
      code: "bad_request:continue-reason",
    });
    await continueAnyway(r.id);
    const t0 = Date.now();
    await worker(FAST, r.id).runOnce();
    const secs = (Date.now() - t0) / 1000;
    v = (await getRedrive(actors.viewer, meta(), { jobId: r.id })).redrive;
    expect(v.state).toBe("succeeded");
    expect(v.progress).toMatchObject({ redriven: 30, failed: 0, parked: 0, returned: 0, pending: 0, eta: 0 });
    expect(secs).toBeGreaterThan(25 / 20 - 0.3); // paced: 25 letters at 20/s
    expect(Number(v.progress.rate)).toBeLessThanOrEqual(20 * 1.15);

    const arrived = await peek(source, 30);
    expect(await kit.depth(dlq)).toBe(0);
    expect(arrived.map((m) => m.properties.messageId)).toEqual(Array.from({ length: 30 }, (_, i) => `m-${i}`)); // index order kept
    for (const m of arrived) {
      expect(m.properties.headers?.["x-dlq-redrive-id"]).toBe(r.id);
      expect(Number(m.properties.headers?.["x-dlq-redrive-count"])).toBe(1);
      expect(String(m.properties.headers?.["x-dlq-original-message-id"])).toBe(m.properties.messageId);
      expect(String(m.properties.headers?.["x-dlq-replay-id"])).toMatch(/^[0-9a-f-]{36}$/);
      expect(m.properties.headers?.["x-death"]).toBeDefined(); // broker history kept
    }
    expect(await ledgerStates(r.id)).toEqual({ moved: 30 });
    const audit = await getDb().auditEvent.findMany({ where: { operationId: r.id } });
    expect(
      audit.filter((a) => a.scope === "letter" && a.action === "letter.redrive" && a.outcome === "success"),
    ).toHaveLength(30);
    const startRow = audit.find((a) => a.action === "redrive.start")!;
    expect(startRow.details).toMatchObject({ fix: "Deployed orders 2.3.2 (timeout raised)", count: 30 });
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining([
        "redrive.sample_verdict",
        "redrive.continue_anyway",
        "redrive.bulk_start",
        "redrive.finished",
      ]),
    );
    const cont = audit.filter((a) => a.action === "redrive.continue_anyway");
    expect(cont).toHaveLength(1);
    expect(cont[0]).toMatchObject({ outcome: "success", actorEmail: actors.operator.email });
    expect(cont[0].details).toMatchObject({ verdict: "inconclusive", reason: CONTINUE_REASON });
  });

  it("pauses and resumes between batches without losing or repeating a letter", async () => {
    const { dlq, source } = await seeded(40);
    const r = await start(dlq, { rate: 20, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    await continueAnyway(r.id);
    const w = worker(FAST, r.id);
    w.start();
    try {
      await new Promise((res) => setTimeout(res, 700));
      await pauseRedrive(actors.operator, meta(), { jobId: r.id });
      const paused = await waitState(r.id, ["paused"]);
      expect(String((paused.progress as Record<string, unknown>).pauseReason)).toMatch(/Paused by/);
      const mid = await ledgerStates(r.id);
      expect(mid.pending).toBeGreaterThan(0);
      expect(mid.moved).toBeGreaterThan(2);
      // The batch claimed while the last one moved was given back: nothing says "moving", and no
      // letter still in the DLQ counts an attempt it never had.
      expect(mid.moving).toBeUndefined();
      expect(await pendingTried(r.id)).toBe(0);
      await new Promise((res) => setTimeout(res, 300));
      expect(await ledgerStates(r.id)).toEqual(mid); // nothing moves while paused
      await resumeRedrive(actors.operator, meta(), { jobId: r.id });
      await waitState(r.id, ["succeeded"]);
    } finally {
      await w.stop();
    }
    expect(await ledgerStates(r.id)).toEqual({ moved: 40 });
    expect(await kit.depth(dlq)).toBe(0);
    expect(await kit.depth(source)).toBe(40);
  });

  it("cancels mid-bulk: letters not moved stay in the DLQ", async () => {
    const { dlq, source } = await seeded(40);
    const r = await start(dlq, { rate: 20, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    await continueAnyway(r.id);
    const w = worker(FAST, r.id);
    w.start();
    try {
      await new Promise((res) => setTimeout(res, 600));
      await cancelRedrive(actors.operator, meta(), { jobId: r.id });
      await waitState(r.id, ["cancelled"]);
    } finally {
      await w.stop();
    }
    const s = await ledgerStates(r.id);
    expect(s.pending).toBeGreaterThan(0);
    expect(s).toEqual({ moved: s.moved, pending: s.pending }); // nothing left "moving"
    expect(await pendingTried(r.id)).toBe(0);
    expect(s.moved + s.pending).toBe(40);
    expect(await kit.depth(source)).toBe(s.moved);
    expect(await kit.depth(dlq)).toBe(s.pending);
  });

  it("parks letters at the redrive-count limit instead of cycling them again", async () => {
    const park = await kit.queue(kit.name("parking"));
    const { dlq, source } = await seeded(6, (i) =>
      i % 2 === 0 ? { "x-dlq-redrive-count": 3 } : { "x-dlq-redrive-count": 1 },
    );
    const r = await start(dlq, { sample: { percent: 100 }, parking: { kind: "queue", name: park } });
    await worker(FAST, r.id).runOnce();
    expect(await ledgerStates(r.id)).toEqual({ moved: 3, parked: 3 });
    const parked = await peek(park, 3);
    expect(parked.map((m) => m.properties.messageId)).toEqual(["m-0", "m-2", "m-4"]);
    const moved = await peek(source, 3);
    expect(moved.map((m) => Number(m.properties.headers?.["x-dlq-redrive-count"]))).toEqual([2, 2, 2]);
    expect(await kit.depth(dlq)).toBe(0);
    const audit = await getDb().auditEvent.findMany({ where: { operationId: r.id, action: "letter.park" } });
    expect(audit).toHaveLength(3);
  });

  it("sample that comes back needs an admin override; then the breaker pauses the bulk stage", async () => {
    const { dlq, source } = await seeded(60);
    // A consumer on the origin that keeps failing: every redriven letter dead-letters again.
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createChannel();
    await ch.consume(source, (m) => m && ch.nack(m, false, false));
    try {
      const r = await start(dlq, {
        rate: 20,
        sample: { count: 3 },
        watchSeconds: 2,
        breakerMinLetters: 5,
        breakerWindow: 50,
      });
      await worker(FAST, r.id).runOnce();
      const v = (await getRedrive(actors.operator, meta(), { jobId: r.id })).redrive;
      expect(v).toMatchObject({
        state: "paused",
        sampleVerdict: "returned",
        sampleReturned: 3,
        bulk: { ready: true, needsOverride: true },
      });
      expect(v.pauseReason).toMatch(/Sample returned 3 of 3/);
      await expect(startBulk(actors.operator, meta(), { jobId: r.id })).rejects.toMatchObject({
        code: "forbidden:redrive:override",
      });
      await expect(
        startBulk(actors.operator, meta(), { jobId: r.id, overrideReason: "known flaky" }),
      ).rejects.toMatchObject({ code: "forbidden:redrive:override" });
      await startBulk(actors.admin, meta(), { jobId: r.id, overrideReason: "Returns were the old consumer draining" });
      await worker(FAST, r.id).runOnce();
      const after = (await getRedrive(actors.operator, meta(), { jobId: r.id })).redrive;
      expect(after.state).toBe("paused");
      expect(after.pauseReason).toMatch(/circuit breaker: \d+ of the last \d+ redriven letters/);
      const s = await ledgerStates(r.id);
      expect(s.pending).toBeGreaterThan(0); // stopped well before the end
      expect(s.returned).toBeGreaterThan(3);
      await cancelRedrive(actors.operator, meta(), { jobId: r.id });
    } finally {
      await ch.close();
      await conn.close();
    }
  });

  it("resumes after a crash (lease expired) from the ledger: letters moved but never recorded count as moved (confirmed after restart), not missing, and are not re-sent", async () => {
    const { dlq, source } = await seeded(30);
    const r = await start(dlq, { rate: 200, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    await continueAnyway(r.id);

    // A worker that dies in the middle of its bulk batch (28 letters at 200/s): it hears of 10
    // letters, then 5 more are moved at the broker (confirmed and acked) without it hearing, then it dies.
    const real = getAdapter(CONN);
    let results = 0;
    const dying: BrokerAdapter = Object.assign(Object.create(real) as BrokerAdapter, {
      moveLetters: async function* (
        q: string,
        reqs: Parameters<BrokerAdapter["moveLetters"]>[1],
        o?: Parameters<BrokerAdapter["moveLetters"]>[2],
      ) {
        for await (const res of real.moveLetters(q, reqs, o)) {
          results++;
          if (results <= 10) yield res;
          else if (results === 15) throw new Error("process killed");
        }
      },
    });
    const claimed = (await jobStore().claim("doomed", ["redrive"], 60_000, { jobIds: [r.id] }))!;
    expect(claimed.id).toBe(r.id);
    await expect(
      redriveHandler({ ...FAST, adapterFor: () => dying })({
        job: claimed,
        signal: new AbortController().signal,
        checkpoint: (u) => jobStore().heartbeat(r.id, "doomed", 60_000, u),
      }),
    ).rejects.toThrow(/killed/);
    const crashed = await ledgerStates(r.id);
    expect(crashed).toEqual({ moved: 12, interrupted: 18 }); // 2 sample + 10 reported; the rest of the batch's outcome unknown
    // Moved at the broker without the worker hearing: at least the 5 it counted (the mover acks each
    // group of settled letters before reporting them, so a few more can be gone from the DLQ).
    const unheard = 18 - (await kit.depth(dlq));
    expect(unheard).toBeGreaterThanOrEqual(5);
    await getDb().$executeRawUnsafe(
      `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
      r.id,
    );

    await worker(FAST, r.id).runOnce();
    const done = (await jobStore().get(r.id))!;
    expect(done.state).toBe("succeeded");
    expect(await ledgerStates(r.id)).toEqual({ moved: 30 });
    const rows = await getDb().redriveLetter.findMany({ where: { jobId: r.id }, orderBy: { seq: "asc" } });
    const confirmed = rows.filter((x) => /confirmed after restart/.test(x.reason ?? ""));
    expect(confirmed).toHaveLength(unheard); // the ones the dying worker never heard of
    const arrived = await peek(source, await kit.depth(source));
    const ids = arrived.map((m) => String(m.properties.messageId));
    expect(new Set(ids).size).toBe(30); // none lost
    expect(ids.length - 30).toBeLessThanOrEqual(moveWindowFor(200)); // duplicates only within the move window at this rate
    // Every copy is tagged with the job and with its letter's one replay id (a duplicate shares it).
    const replayOf = new Map(rows.map((x) => [x.messageId, x.replayId]));
    for (const m of arrived) {
      expect(m.properties.headers?.["x-dlq-redrive-id"]).toBe(r.id);
      expect(String(m.properties.headers?.["x-dlq-replay-id"])).toBe(replayOf.get(String(m.properties.messageId)));
    }
    for (const c of confirmed) expect(arrived.some((m) => m.properties.messageId === c.messageId)).toBe(true);
    expect(await kit.depth(dlq)).toBe(0);
    const audit = await getDb().auditEvent.findMany({ where: { operationId: r.id, scope: "letter" } });
    expect(audit).toHaveLength(30); // one per letter: nothing owed for the interrupted attempts
  });

  it("on resume, removes the DLQ copy of a letter it had moved when the broken batch's ack was lost; a copy that came back with this job's redrive id stays", async () => {
    const { dlq, source } = await seeded(6);
    const r = await start(dlq, { rate: 20, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    const moved = await getDb().redriveLetter.findMany({
      where: { jobId: r.id, state: "moved" },
      orderBy: { seq: "asc" },
    });
    expect(moved).toHaveLength(2);
    const [lost, back] = moved;
    const order = (messageId: string | null) => Number(/m-(\d+)/.exec(messageId ?? "")![1]);
    // What a lost ack leaves: the letter's DLQ copy, as it was dead-lettered, still there.
    await kit.publish(dlq, {
      body: enc(`{"order":${order(lost.messageId)}}`),
      messageId: lost.messageId!,
      headers: { "x-exception-class": "java.net.SocketTimeoutException" },
    });
    // And a copy of the other one that came back after the redrive (it carries the job's markers).
    await kit.publish(dlq, {
      body: enc(`{"order":${order(back.messageId)}}`),
      messageId: back.messageId!,
      headers: {
        "x-exception-class": "java.net.SocketTimeoutException",
        "x-dlq-redrive-id": r.id,
        "x-dlq-replay-id": back.replayId!,
      },
    });
    await getDb().redriveLetter.updateMany({
      where: { jobId: r.id, letterId: { in: [lost.letterId, back.letterId] } },
      data: { leftoverCheck: true },
    });
    await kit.waitDepth(dlq, 6);

    await continueAnyway(r.id);
    await worker(FAST, r.id).runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("succeeded");
    expect(await getDb().redriveLetter.count({ where: { jobId: r.id, leftoverCheck: true } })).toBe(0);
    const audit = await getDb().auditEvent.findMany({
      where: { operationId: r.id, action: "redrive.leftovers_removed" },
    });
    expect(audit).toHaveLength(1);
    expect(audit[0].details).toMatchObject({ removed: 1, checked: 2, letterIds: [lost.letterId] });
    expect(
      (await getDb().redriveLetter.findFirst({ where: { jobId: r.id, letterId: lost.letterId } }))!.reason,
    ).toMatch(/came back to the DLQ and was removed when the job resumed/);
    // Left in the DLQ: only the copy that came back (the return check counts it as returned).
    const left = await peek(dlq, 1);
    expect(left.map((m) => [m.properties.messageId, m.properties.headers?.["x-dlq-redrive-id"]])).toEqual([
      [back.messageId, r.id],
    ]);
    expect((await getDb().redriveLetter.findFirst({ where: { jobId: r.id, letterId: back.letterId } }))!.state).toBe(
      "returned",
    );
    expect(new Set((await peek(source, 6)).map((m) => m.properties.messageId)).size).toBe(6); // every letter at its origin once
  });

  it("cancelled while paused with letters flagged for the leftover check: a worker ends the job and removes those DLQ copies first; a paused job without flags is cancelled at once", async () => {
    const { dlq, source } = await seeded(6);
    const r = await start(dlq, { rate: 20, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("paused"); // awaiting the bulk stage
    const [lost] = await getDb().redriveLetter.findMany({
      where: { jobId: r.id, state: "moved" },
      orderBy: { seq: "asc" },
    });
    const order = Number(/m-(\d+)/.exec(lost.messageId ?? "")![1]);
    await kit.publish(dlq, {
      body: enc(`{"order":${order}}`),
      messageId: lost.messageId!,
      headers: { "x-exception-class": "java.net.SocketTimeoutException" },
    });
    await getDb().redriveLetter.updateMany({
      where: { jobId: r.id, letterId: lost.letterId },
      data: { leftoverCheck: true },
    });
    await kit.waitDepth(dlq, 5);

    const cancelled = await cancelRedrive(actors.operator, meta(), { jobId: r.id });
    expect(cancelled.state).toBe("cancelling");
    await worker(FAST, r.id).runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("cancelled");
    expect(await getDb().redriveLetter.count({ where: { jobId: r.id, leftoverCheck: true } })).toBe(0);
    const audit = await getDb().auditEvent.findMany({
      where: { operationId: r.id, action: { in: ["redrive.leftovers_removed", "redrive.finished"] } },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual(["redrive.leftovers_removed", "redrive.finished"]);
    expect(audit[0].details).toMatchObject({ removed: 1, letterIds: [lost.letterId] });
    expect(audit[1].details).toMatchObject({ state: "cancelled" });
    // The DLQ holds the four letters the cancelled job never moved, and not the leftover copy.
    const left = await peek(dlq, 4);
    expect(left.map((m) => m.properties.messageId)).not.toContain(lost.messageId);
    expect(await ledgerStates(r.id)).toEqual({ moved: 2, pending: 4 });
    expect(new Set((await peek(source, 2)).map((m) => m.properties.messageId)).size).toBe(2);

    // Without flags a paused job is cancelled at once, no worker needed.
    const { dlq: other } = await seeded(3);
    const r2 = await start(other, { rate: 20, sample: { count: 1 } });
    await worker(FAST, r2.id).runOnce();
    expect((await cancelRedrive(actors.operator, meta(), { jobId: r2.id })).state).toBe("cancelled");
  });

  it("a redrive cancelled while it waits for the go-ahead ends with a result: what moved, and that the rest is still in the DLQ", async () => {
    const { dlq } = await seeded(5);
    const r = await start(dlq, { rate: 20, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("paused"); // awaiting the bulk stage
    const cancelled = await cancelRedrive(actors.operator, meta(), { jobId: r.id });
    expect(cancelled.state).toBe("cancelled");
    const summary = "2 moved, 3 not moved, still in the DLQ";
    // The job's view (its page and the API read progress.result) and its final audit row say the same.
    expect(cancelled.progress).toMatchObject({ result: { complete: false, left: 3, summary } });
    const [finished] = await getDb().auditEvent.findMany({ where: { operationId: r.id, action: "redrive.finished" } });
    expect(finished).toMatchObject({ outcome: "failure" });
    expect(finished.details).toMatchObject({ state: "cancelled", summary, result: { left: 3 } });
    expect(await peek(dlq, 3)).toHaveLength(3);
  });

  it("a sample letter gone from the DLQ is missing (re-checked before the job ends, not taken for moved)", async () => {
    const { dlq, source } = await seeded(8);
    // Taken out of the DLQ after the scan (the head letter: a sample letter).
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createChannel();
    const taken = await ch.get(dlq, { noAck: false });
    expect(taken ? taken.properties.messageId : taken).toBe("m-0");
    ch.ack(taken as amqp.GetMessage);
    await ch.close();
    await conn.close();
    const r = await start(dlq, { rate: 200, sample: { count: 3 } });
    await worker(FAST, r.id).runOnce();
    let v = await getRedrive(actors.operator, meta(), { jobId: r.id });
    expect(v.counts).toMatchObject({ moved: 2, missing: 1 });
    await continueAnyway(r.id);
    await worker(FAST, r.id).runOnce();
    v = await getRedrive(actors.operator, meta(), { jobId: r.id });
    expect(v.redrive.state).toBe("succeeded");
    expect(await ledgerStates(r.id)).toEqual({ moved: 7, missing: 1 });
    const row = (await getDb().redriveLetter.findFirst({ where: { jobId: r.id, state: "missing" } }))!;
    expect(row).toMatchObject({ messageId: "m-0", stage: "sample", attempts: 2 }); // asked for again by the verification pass
    expect(row.reason).toMatch(/Not found in DLQ .* when the console looked through it/);
    expect(row.reason).not.toMatch(/interrupted|confirmed/);
    expect(v.redrive.progress).toMatchObject({ missing: 1, redriven: 7 });
    // Not a plain success: the view, the API's progress and the final audit row say what is left.
    const summary = "7 moved, 1 missing (not found when the DLQ was looked through)";
    expect(v.redrive.progress).toMatchObject({ result: { complete: false, left: 1, summary } });
    const finished = await getDb().auditEvent.findFirst({ where: { operationId: r.id, action: "redrive.finished" } });
    expect(finished).toMatchObject({ outcome: "failure", details: expect.objectContaining({ summary }) });
    expect(await kit.depth(source)).toBe(7);
    expect(await kit.depth(dlq)).toBe(0);
  });

  it("pauses, not fails, when its DLQ is not found mid-job (nothing moved in that step); cancelled, the letters left are untouched", async () => {
    const { dlq, source } = await seeded(6);
    const r = await start(dlq, { rate: 200, sample: { count: 2 } });
    await worker(FAST, r.id).runOnce();
    await continueAnyway(r.id);
    const ch = await kit.channel();
    await ch.deleteQueue(dlq);
    await worker(FAST, r.id).runOnce();
    const v = (await getRedrive(actors.operator, meta(), { jobId: r.id })).redrive;
    expect(v.state).toBe("paused");
    expect(v.pauseReason).toMatch(/^Paused: .*(not found|does not exist).*Resume once it is put right, or cancel\.$/s);
    expect(v.progress).toMatchObject({ autoResume: false });
    expect(await ledgerStates(r.id)).toEqual({ moved: 2, pending: 4 }); // refused before anything moved: still pending, not "interrupted"
    await cancelRedrive(actors.operator, meta(), { jobId: r.id });
    expect((await jobStore().get(r.id))?.state).toBe("cancelled");
    expect(await kit.depth(source)).toBe(2);
  });
});
