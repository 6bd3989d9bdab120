import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { AMQP_URL, RabbitKit, drainRedriven } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { proxiedRabbitAdapter } from "@/test/proxied-rabbitmq";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanDlq } from "@/test/integration-kit";
import { redriveHandler } from "./handler";
import { resumeReachable } from "./auto-resume";
import { moveWindowFor } from "./token-bucket";
import { getRedrive, pauseRedrive, planRedrive, resumeRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * The broker going away in the middle of a redrive, on the real RabbitMQ but without stopping it
 * (others share it): the engine's adapter reaches RabbitMQ through a TCP proxy that the test first
 * freezes (the broker's answers, confirms included, stop arriving, so publishes are left
 * unconfirmed) and then cuts (every connection reset, the port refusing new ones), later restores.
 * rabbitmqctl stop_app itself is exercised by the fault tests (lib/redrive/faults.integration.test.ts).
 */
const CONN = "local-rabbitmq";
/** The move window at the rate these tests use (1,000/s). */
const IN_FLIGHT = moveWindowFor(1000);
const meta = () => ({ requestId: `ba-${randomUUID()}`, ip: "127.0.0.1" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const kit = new RabbitKit();
let operator: Actor;

const rig = proxiedRabbitAdapter(CONN);
const proxy = rig.proxy;

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@redrive-away.test`,
    role: "operator",
    password: "a-long-enough-password",
  });
  operator = { id: u.id, email: u.email, name: null, role: "operator" };
  await rig.start();
});
afterAll(async () => {
  await rig.stop();
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

/**
 * Stage 2 after the sample: nobody consumes these origins, so the verdict is inconclusive
 * and the operator continues anyway, with a reason.
 */
const continueAnyway = (jobId: string) =>
  startBulk(operator, meta(), { jobId, continueAnywayReason: "Nothing consumes the origin in this test" });

const ledgerStates = async (jobId: string) =>
  Object.fromEntries(
    (
      await getDb().$queryRawUnsafe<Array<{ state: string; n: number }>>(
        `SELECT state, count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid GROUP BY state`,
        jobId,
      )
    ).map((r) => [r.state, r.n]),
  ) as Record<string, number>;

describe("redrive when the broker goes away mid-job (RabbitMQ through a proxy)", () => {
  it("letters that failed because the broker went away are retried on resume; letters refused by a reachable broker stay failed; the job resumes by itself once the broker answers (unless an operator pinned it)", async () => {
    const n = 600;
    // One DLQ fed by two work queues: 3 letters from a queue deleted afterwards (their origin is
    // gone, so RabbitMQ returns them as unroutable: the letters' own failure), then n letters.
    const dlq = await kit.queue(kit.name("dlq"));
    const gone = await kit.queue(kit.name("gone"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
    const source = await kit.queue(kit.name("work"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
    });
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createConfirmChannel();
    for (let i = 0; i < 3; i++)
      ch.sendToQueue(gone, Buffer.from(`{"lost":${i}}`), { persistent: true, messageId: `u-${i}` });
    for (let i = 0; i < n; i++)
      ch.sendToQueue(source, Buffer.from(`{"order":${i}}`), {
        persistent: true,
        messageId: `m-${i}`,
        headers: { "x-exception-class": "java.net.SocketTimeoutException" },
      });
    await ch.waitForConfirms();
    await conn.close();
    await kit.rejectAll(gone, 3);
    await kit.rejectAll(source, n);
    await kit.waitDepth(dlq, n + 3, 30_000);
    await (await kit.channel()).deleteQueue(gone);

    await scanDlq(CONN, dlq);

    const selection = { kind: "filter", filter: {} };
    const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.count).toBe(n + 3);
    // A rate high enough that the first bulk batch (500 letters) is still moving when the proxy freezes.
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "broker away test",
      confirmedCount: n + 3,
      watchSeconds: 1,
      sample: { count: 5 },
      rate: 1000,
    });
    const worker = () =>
      new JobWorker({
        handlers: {
          redrive: redriveHandler({ adapterFor: () => rig.adapter, returnCheckMs: 60_000, verifyGraceMs: 1000 }),
        },
        owner: `ba-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        scope: { jobIds: [r.id] },
      });

    // Sample: the 3 unroutable letters fail on a reachable broker (the check after the batch
    // finds it answering), so they stay failed; the 2 others move.
    await worker().runOnce();
    expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive).toMatchObject({ stage: "awaiting_bulk" });
    expect(await ledgerStates(r.id)).toEqual({ failed: 3, moved: 2, pending: n - 2 });
    const unroutable = await getDb().redriveLetter.findMany({ where: { jobId: r.id, state: "failed" } });
    expect(unroutable.map((x) => x.messageId).sort()).toEqual(["u-0", "u-1", "u-2"]);
    for (const x of unroutable) expect(x.reason).toMatch(/unroutable/);

    await continueAnyway(r.id);
    const running = worker().runOnce();
    while ((await kit.depth(source)) < 100) await sleep(5);
    proxy.freeze(); // publishes go on until the mover's in-flight window is full, none is confirmed
    await sleep(300);
    await proxy.cut();
    await running;
    const paused = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
    expect(paused.state).toBe("paused");
    expect(paused.pauseReason).toMatch(
      /^Paused: .*cannot be reached.*still in the DLQ; the redrive resumes by itself once the broker answers again/s,
    );
    expect(paused.progress).toMatchObject({ autoResume: true });
    const mid = await ledgerStates(r.id);
    expect(mid.failed).toBe(3); // only the letters' own failures
    expect(mid.missing ?? 0).toBe(0);
    // Letters in flight when the broker went: back to pending with the reason (the mover reported
    // them failed) or interrupted (it broke off before reporting them); either way not failed.
    const waiting = await getDb().redriveLetter.count({
      where: { jobId: r.id, state: "pending", reason: { contains: "could not be reached during the attempt" } },
    });
    expect(waiting + (mid.interrupted ?? 0)).toBeGreaterThan(0);
    console.log(`[broker-away] first outage: ${JSON.stringify({ ledger: mid, pendingWithReason: waiting })}`);
    expect(await getDb().auditEvent.count({ where: { operationId: r.id, scope: "letter", outcome: "failure" } })).toBe(
      3,
    ); // the unroutable ones; nothing yet for the others

    // Not resumed while the broker does not answer; an operator can pin it paused.
    const auto = () => resumeReachable({ adapterFor: () => rig.adapter, jobIds: [r.id] });
    expect(await auto()).toEqual([]);
    await pauseRedrive(operator, meta(), { jobId: r.id });
    await proxy.restore();
    expect(await auto()).toEqual([]); // pinned: the broker answers, but an operator said wait
    expect((await jobStore().get(r.id))!.state).toBe("paused");
    await resumeRedrive(operator, meta(), { jobId: r.id });

    // Gone again later in the job: this time it resumes by itself once the broker answers.
    const again = worker().runOnce();
    while ((await kit.depth(source)) < 350) await sleep(5);
    proxy.freeze();
    await sleep(300);
    await proxy.cut();
    await again;
    expect((await jobStore().get(r.id))!.state).toBe("paused");
    expect(await auto()).toEqual([]);
    await proxy.restore();
    expect(await auto()).toEqual([r.id]);
    expect(
      await getDb().auditEvent.count({
        where: { operationId: r.id, action: "redrive.auto_resume", actorEmail: "system" },
      }),
    ).toBe(1);
    await worker().runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("succeeded");
    expect(await ledgerStates(r.id)).toEqual({ moved: n, failed: 3 });
    // The letters' own failures were not tried again.
    expect(
      (await getDb().redriveLetter.findMany({ where: { jobId: r.id, state: "failed" } })).map((x) => x.attempts),
    ).toEqual([1, 1, 1]);

    const inDlq = await drainRedriven(dlq);
    const atOrigin = await drainRedriven(source);
    expect(inDlq.map((m) => m.messageId).sort()).toEqual(["u-0", "u-1", "u-2"]);
    const ids = new Set(atOrigin.map((m) => m.messageId));
    expect(ids.size).toBe(n); // none lost
    expect(atOrigin.length - n).toBeLessThanOrEqual(2 * IN_FLIGHT); // duplicates: copies confirmed by the broker whose confirm never arrived (two outages)
    const rows = await getDb().redriveLetter.findMany({
      where: { jobId: r.id },
      select: { messageId: true, replayId: true },
    });
    const replayOf = new Map(rows.map((x) => [x.messageId, x.replayId]));
    expect(atOrigin.filter((m) => m.redriveId !== r.id || m.replayId !== replayOf.get(m.messageId))).toEqual([]); // all tagged, a duplicate with its letter's replay id
  }, 120_000);

  it("a broker that goes silent without closing the connection (frozen, never cut): the move is abandoned after the stall watchdog's ping gets no answer, the job pauses as unreachable, and finishes after the resume with nothing lost", async () => {
    const n = 400;
    const dlq = await kit.queue(kit.name("dlq"));
    const source = await kit.queue(kit.name("work"), {
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": dlq,
    });
    const conn = await amqp.connect(AMQP_URL);
    const ch = await conn.createConfirmChannel();
    for (let i = 0; i < n; i++)
      ch.sendToQueue(source, Buffer.from(`{"order":${i}}`), { persistent: true, messageId: `m-${i}` });
    await ch.waitForConfirms();
    await conn.close();
    await kit.rejectAll(source, n);
    await kit.waitDepth(dlq, n, 30_000);
    await scanDlq(CONN, dlq);

    const selection = { kind: "filter", filter: {} };
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "silent broker test",
      confirmedCount: n,
      watchSeconds: 1,
      sample: { count: 5 },
      rate: 1000,
    });
    const stallMs = 700;
    const worker = () =>
      new JobWorker({
        handlers: {
          redrive: redriveHandler({
            adapterFor: () => rig.adapter,
            returnCheckMs: 60_000,
            verifyGraceMs: 1000,
            stallMs,
          }),
        },
        owner: `ba-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        scope: { jobIds: [r.id] },
      });
    await worker().runOnce();
    await continueAnyway(r.id);

    const running = worker().runOnce();
    while ((await kit.depth(source)) < 50) await sleep(5);
    proxy.freeze(); // nothing from the broker arrives any more: no confirm, no close, no error
    const frozenAt = Date.now();
    await running;
    const pausedAfter = Date.now() - frozenAt;
    const paused = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
    expect(paused.state).toBe("paused");
    expect(paused.pauseReason).toMatch(
      /^Paused: The broker did not answer within 1 s while a move was waiting on it\..*resumes by itself once the broker answers again/s,
    );
    // Without the watchdog the run waits for amqplib's heartbeat timeout (minutes) or for ever.
    expect(pausedAfter).toBeLessThan(20_000);
    const mid = await ledgerStates(r.id);
    expect(mid.failed ?? 0).toBe(0);
    expect(mid.moving ?? 0).toBe(0);
    expect((mid.interrupted ?? 0) + (mid.pending ?? 0)).toBeGreaterThan(0);

    // The network comes back: the frozen connection is dropped and a new one is made.
    await proxy.cut();
    await proxy.restore();
    expect(await resumeReachable({ adapterFor: () => rig.adapter, jobIds: [r.id] })).toEqual([r.id]);
    await worker().runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("succeeded");
    expect(await ledgerStates(r.id)).toEqual({ moved: n });
    const inDlq = await drainRedriven(dlq);
    const atOrigin = await drainRedriven(source);
    expect(inDlq).toEqual([]);
    expect(new Set(atOrigin.map((m) => m.messageId)).size).toBe(n); // none lost
    expect(atOrigin.length - n).toBeLessThanOrEqual(IN_FLIGHT); // duplicates: copies the broker confirmed while frozen
  }, 120_000);
});
