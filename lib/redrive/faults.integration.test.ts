import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAuditChain } from "@/lib/audit";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { AMQP_URL, RabbitKit, drainRedriven } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { redriveHandler } from "./handler";
import { moveWindowFor } from "./token-bucket";
import { resumeReachable } from "./auto-resume";
import { getRedrive, planRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * Fault tests of the redrive engine on the real RabbitMQ (`npm run test:faults`, a vitest project of
 * its own, run by scripts/test.sh after the integration tests; one file, its tests one after another):
 *  - SIGKILL of a console worker process (lib/redrive/testing/worker-process.ts) at a random point of
 *    the bulk stage, restart, finish: counted over the broker.
 *  - two worker processes on one job at once (its lease taken over three times).
 *  - RabbitMQ stopped and started (`rabbitmqctl stop_app` / `start_app`) mid-job: the job pauses
 *    with the broker's reason; once the broker answers it resumes by itself and retries what
 *    failed while the broker was away.
 * Every worker here claims only its own job (JobWorker `scope`), so jobs left by other test files
 * in a reused database are never picked up.
 * CI size: FAULT_RUNS × FAULT_LETTERS (default 2 × 2,000); the full 5 × 10,000 by hand:
 *   FAULT_RUNS=5 FAULT_LETTERS=10000 npm run test:faults
 * stop_app stops the whole broker: never run this file while others use the same RabbitMQ.
 */
const CONN = "local-rabbitmq";
const RUNS = Number(process.env.FAULT_RUNS ?? 2);
const N = Number(process.env.FAULT_LETTERS ?? 2000);
const LEASE_MS = 3000;
/** The bulk rates here, and the move window (letters published and not yet confirmed+acked at once) the engine uses at each. */
const FAST_RATE = 10_000;
const OUTAGE_RATE = 300;
const IN_FLIGHT = moveWindowFor(FAST_RATE);
const OUTAGE_IN_FLIGHT = moveWindowFor(OUTAGE_RATE);
const kit = new RabbitKit();
let operator: Actor;
const meta = () => ({ requestId: `fault-${randomUUID()}`, ip: "127.0.0.1" });
/** DLQ_TEST_RABBITMQ_NODE: the node to stop and start when the tests run against a private one (see test-kit). */
const rabbitmqctl = (...args: string[]) =>
  execFileSync(
    "rabbitmqctl",
    [...(process.env.DLQ_TEST_RABBITMQ_NODE ? ["-n", process.env.DLQ_TEST_RABBITMQ_NODE] : []), ...args],
    { stdio: "pipe", timeout: 120_000 },
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const children = new Set<ChildProcess>();

/**
 * Leftovers as a reused database has them (other files' jobs): a queued redrive and one whose
 * holder died (lease expired), both older than every job of this file. No worker here may take them.
 */
const decoys: string[] = [];

beforeAll(async () => {
  const u = await createUser({
    email: `op-${randomUUID().slice(0, 8)}@faults.test`,
    role: "operator",
    password: "a-long-enough-password",
  });
  operator = { id: u.id, email: u.email, name: null, role: "operator" };
  for (const state of ["queued", "running"]) {
    const j = await jobStore().enqueue({
      kind: "redrive",
      connectionId: CONN,
      queue: `decoy-${randomUUID().slice(0, 8)}`,
    });
    if (state === "running")
      await getDb().$executeRawUnsafe(
        `UPDATE jobs SET state = 'running', lease_owner = 'long-gone', lease_expires_at = now() - interval '1 hour' WHERE id = $1::uuid`,
        j.id,
      );
    decoys.push(j.id);
  }
});
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await getDb().$executeRawUnsafe(
    `UPDATE jobs SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, finished_at = now() WHERE id = ANY($1::uuid[])`,
    decoys,
  );
  // The kit's channel may have died with the broker (stop_app): let it open a new one for the cleanup.
  Object.assign(kit as unknown as Record<string, unknown>, { ch: null, conn: null });
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

/** N letters dead-lettered by real rejection (nack without requeue) into a fresh DLQ, in order. */
async function seed(n: number): Promise<{ dlq: string; source: string }> {
  const dlq = await kit.queue(kit.name("dlq"));
  const source = await kit.queue(kit.name("work"), { "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq });
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createConfirmChannel();
  for (let i = 0; i < n; i += 1000) {
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      ch.sendToQueue(source, Buffer.from(`{"order":${j}}`), {
        persistent: true,
        messageId: `m-${j}`,
        headers: { "x-exception-class": "java.net.SocketTimeoutException" },
      });
    }
    await ch.waitForConfirms();
  }
  const rc = await conn.createChannel();
  await rc.prefetch(500);
  let seen = 0;
  await new Promise<void>((resolve) => {
    void rc.consume(source, (m) => {
      if (!m) return;
      rc.nack(m, false, false);
      if (++seen === n) resolve();
    });
  });
  await rc.close();
  await conn.close();
  await kit.waitDepth(dlq, n, 60_000);
  return { dlq, source };
}

async function scan(queue: string) {
  const kind = `scan-f-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: CONN,
    queue,
    params: { acceptRisk: true },
  });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 30_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

/**
 * Stage 2 after the sample: nobody consumes these origins, so the verdict is inconclusive
 * and the operator continues anyway, with a reason.
 */
const continueAnyway = (jobId: string) =>
  startBulk(operator, meta(), { jobId, continueAnywayReason: "Nothing consumes the origin in this test" });

/**
 * Seed, scan, plan, start with a sample of 5 watched 1 s (in this process; inconclusive, nobody
 * consumes the origin), then continue anyway into the bulk stage.
 */
async function readyForBulk(n: number) {
  const { dlq, source } = await seed(n);
  await scan(dlq);
  const selection = { kind: "filter", filter: {} };
  const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
  expect(preview.count).toBe(n);
  const r = await startRedrive(operator, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    fix: "fault test",
    confirmedCount: n,
    watchSeconds: 1,
    sample: { count: 5 },
    rate: FAST_RATE,
  });
  await new JobWorker({
    handlers: { redrive: redriveHandler({ returnCheckMs: 300 }) },
    owner: `sample-${r.id.slice(0, 6)}`,
    leaseMs: 10_000,
    scope: { jobIds: [r.id] },
  }).runOnce();
  expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive).toMatchObject({
    stage: "awaiting_bulk",
    sampleVerdict: "inconclusive",
  });
  await continueAnyway(r.id);
  return { dlq, source, jobId: r.id };
}

function workerProcess(tag: string, jobId: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=react-server", "lib/redrive/testing/worker-process.ts"],
    {
      cwd: process.cwd(),
      env: {
        ...process.env,
        FAULT_JOB_ID: jobId,
        FAULT_LEASE_MS: String(LEASE_MS),
        FAULT_OWNER: `${tag}-${randomUUID().slice(0, 6)}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  child.on("exit", (code, signal) => {
    children.delete(child);
    if (process.env.FAULT_CHILD_LOG)
      appendFileSync(process.env.FAULT_CHILD_LOG, `[${tag}] exited code=${code} signal=${signal}\n`);
  });
  child.stdout!.on("data", (d) => {
    if (process.env.FAULT_CHILD_LOG) appendFileSync(process.env.FAULT_CHILD_LOG, `[${tag} stdout] ${String(d)}`);
  });
  let err = "";
  child.stderr!.on("data", (d) => {
    err += String(d);
    if (process.env.FAULT_CHILD_LOG) appendFileSync(process.env.FAULT_CHILD_LOG, `[${tag}] ${String(d)}`);
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => String(d).includes("ready") && resolve(child));
    child.on("exit", (code) => reject(new Error(`worker process exited (${code}) before ready: ${err}`)));
  });
}

async function stopGracefully(c: ChildProcess) {
  if (c.exitCode !== null) return;
  const exited = new Promise((r) => c.once("exit", r));
  c.kill("SIGTERM");
  await Promise.race([exited, sleep(10_000)]);
  if (c.exitCode === null) c.kill("SIGKILL");
}

const ledgerStates = async (jobId: string) =>
  Object.fromEntries(
    (
      await getDb().$queryRawUnsafe<Array<{ state: string; n: number }>>(
        `SELECT state, count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid GROUP BY state`,
        jobId,
      )
    ).map((r) => [r.state, r.n]),
  ) as Record<string, number>;

/** Waits for the job to end; fails at once when every worker process that could finish it has exited. */
async function waitDone(jobId: string, workers: ChildProcess[] = [], ms = 120_000) {
  const until = Date.now() + ms;
  for (;;) {
    const j = (await jobStore().get(jobId))!;
    if (["succeeded", "failed", "cancelled", "paused"].includes(j.state)) return j;
    if (workers.length > 0 && workers.every((w) => w.exitCode !== null || w.signalCode !== null)) {
      throw new Error(
        `job ${jobId} still ${j.state}, and its worker processes exited (${workers.map((w) => w.exitCode ?? w.signalCode).join(", ")})`,
      );
    }
    if (Date.now() > until) throw new Error(`job ${jobId} still ${j.state}`);
    await sleep(100);
  }
}

/**
 * The count over the broker: every letter once at the origin or still in the DLQ, none lost;
 * duplicates within the window; every copy tagged with the job and with its letter's replay id as
 * the ledger has it (a duplicate carries the same one, so it is recognisable as a duplicate).
 */
async function countOverBroker(jobId: string, dlq: string, source: string, n: number) {
  const inDlq = await drainRedriven(dlq);
  const atOrigin = await drainRedriven(source);
  const rows = await getDb().redriveLetter.findMany({ where: { jobId }, select: { messageId: true, replayId: true } });
  const replayOf = new Map(rows.map((r) => [r.messageId, r.replayId]));
  const ids = new Set([...inDlq, ...atOrigin].map((m) => m.messageId));
  const lost = Array.from({ length: n }, (_, i) => `m-${i}`).filter((id) => !ids.has(id));
  const duplicates = atOrigin.length + inDlq.length - ids.size;
  const untagged = atOrigin.filter(
    (m) => m.redriveId !== jobId || !m.replayId || m.replayId !== replayOf.get(m.messageId),
  ).length;
  const replayIds = new Set(atOrigin.map((m) => m.replayId));
  const distinctAtOrigin = new Set(atOrigin.map((m) => m.messageId)).size;
  return {
    lost: lost.length,
    duplicates,
    untagged,
    atOrigin: atOrigin.length,
    distinctAtOrigin,
    inDlq: inDlq.length,
    distinctReplayIds: replayIds.size,
  };
}

const confirmedAfterRestart = (jobId: string) =>
  getDb().redriveLetter.count({ where: { jobId, reason: { contains: "confirmed after restart" } } });

describe(`redrive fault tests on RabbitMQ (${RUNS} × ${N} letters)`, () => {
  it(
    "SIGKILL of the console worker at a random point: a new process resumes and finishes; nothing lost, duplicates tagged and within the window",
    async () => {
      const figures: unknown[] = [];
      for (let run = 0; run < RUNS; run++) {
        const { dlq, source, jobId } = await readyForBulk(N);
        const first = await workerProcess("kill-me", jobId);
        const killAt = Math.floor(N * (0.05 + Math.random() * 0.85)); // a random point of the bulk stage
        const t0 = Date.now();
        // Letters arriving at the origin (inside a move batch, not only between batches' ledger writes).
        while ((await kit.depth(source)) < killAt && (await jobStore().get(jobId))!.state !== "succeeded")
          await sleep(2);
        first.kill("SIGKILL");
        await new Promise((r) => first.once("exit", r));
        const killedAfter = (Date.now() - t0) / 1000;
        const atKill = await ledgerStates(jobId);
        const second = await workerProcess("restarted", jobId);
        const restartedAfter = (Date.now() - t0) / 1000;
        const done = await waitDone(jobId, [second]);
        const secs = (Date.now() - t0) / 1000;
        await stopGracefully(second);
        expect(done.state).toBe("succeeded");
        const states = await ledgerStates(jobId);
        const c = await countOverBroker(jobId, dlq, source, N);
        const confirmed = await confirmedAfterRestart(jobId);
        figures.push({
          run: run + 1,
          killAtOriginDepth: killAt,
          finishedBeforeKill: atKill.pending === undefined && atKill.moving === undefined,
          moving: atKill.moving ?? 0,
          confirmed,
          ledger: states,
          ...c,
          killedAfter,
          restartedAfter,
          secs,
        });
        expect(c.lost).toBe(0);
        expect(c.inDlq).toBe(0);
        // Letters moved by the killed process whose outcome it never wrote are moved, not missing.
        expect(states).toEqual({ moved: N });
        expect(c.untagged).toBe(0); // every copy at the origin carries the job's redrive id and its letter's replay id
        expect(c.duplicates).toBeLessThanOrEqual(IN_FLIGHT); // only letters confirmed but not yet acked at the kill
        expect(c.distinctReplayIds).toBe(N); // one replay id per letter; a duplicate shares its letter's
        const audited = await getDb().auditEvent.count({ where: { operationId: jobId, scope: "letter" } });
        expect(audited).toBeGreaterThanOrEqual(N);
      }
      expect(await verifyAuditChain()).toMatchObject({ ok: true });
      console.log(`[faults] SIGKILL runs: ${JSON.stringify(figures)}`);
    },
    RUNS * 120_000,
  );

  it("two console processes on one job (its lease taken over while the first still runs): no letter redriven twice beyond the in-flight window", async () => {
    const { dlq, source, jobId } = await readyForBulk(N);
    const [a, b] = await Promise.all([workerProcess("replica-a", jobId), workerProcess("replica-b", jobId)]);
    const owners = new Set<string>();
    const t0 = Date.now();
    const takeoversAt: number[] = [];
    let secs = 0;
    try {
      // Three times during the bulk stage, the lease is made to expire under its holder (as after a
      // long GC pause or a network partition): the other process takes the job over at once.
      for (let i = 0; i < 3; i++) {
        while ((await kit.depth(source)) < ((i + 1) * N) / 5 && (await jobStore().get(jobId))!.state === "running")
          await sleep(2);
        const j = (await jobStore().get(jobId))!;
        if (j.leaseOwner) owners.add(j.leaseOwner);
        await getDb().$executeRawUnsafe(
          `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid AND state = 'running'`,
          jobId,
        );
        takeoversAt.push((Date.now() - t0) / 1000);
        await sleep(300);
      }
      const done = await waitDone(jobId, [a, b]);
      secs = (Date.now() - t0) / 1000;
      if (done.leaseOwner) owners.add(done.leaseOwner);
      expect(done.state).toBe("succeeded");
    } finally {
      await Promise.all([stopGracefully(a), stopGracefully(b)]);
    }
    const states = await ledgerStates(jobId);
    const c = await countOverBroker(jobId, dlq, source, N);
    console.log(
      `[faults] two processes: ${JSON.stringify({ owners: owners.size, ledger: states, ...c, takeoversAt, secs })}`,
    );
    expect(c.lost).toBe(0);
    expect(states).toEqual({ moved: N });
    expect(c.untagged).toBe(0);
    expect(c.duplicates).toBeLessThanOrEqual(3 * IN_FLIGHT); // at most one in-flight window per takeover
    // Strict: a letter still in the DLQ is one the ledger says is there (failed, checksum
    // mismatch); "missing" means gone from the DLQ. A taking-over run waits for the previous
    // holder to let go of its letters before it asks for them (they are invisible until then).
    const reportedInDlq =
      (states.failed ?? 0) + (states.checksum_mismatch ?? 0) + (states.pending ?? 0) + (states.moving ?? 0);
    expect(c.inDlq).toBe(reportedInDlq);
    expect(c.inDlq).toBe(0); // nothing in this test can fail: every letter ends at the origin
    expect(c.atOrigin - c.duplicates).toBe(N);
  }, 180_000);

  it("RabbitMQ stop_app mid-bulk: the job pauses saying the broker cannot be reached; after start_app it resumes by itself, retries the letters that failed meanwhile and finishes with every letter at its origin", async () => {
    const n = 1500;
    const letters = Array.from({ length: n }, (_, i) => ({
      body: new TextEncoder().encode(`{"order":${i}}`),
      messageId: `m-${i}`,
      headers: { "x-exception-class": "java.net.SocketTimeoutException" },
    }));
    const { dlq, source } = await kit.dlqByReject(letters);
    await scan(dlq);
    const selection = { kind: "filter", filter: {} };
    const preview = await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.count).toBe(n);
    const r = await startRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      fix: "outage test",
      confirmedCount: n,
      watchSeconds: 1,
      sample: { count: 5 },
      rate: OUTAGE_RATE,
    });
    const worker = () =>
      new JobWorker({
        handlers: { redrive: redriveHandler({ returnCheckMs: 300, verifyGraceMs: 1000 }) },
        owner: `ro-${randomUUID().slice(0, 6)}`,
        leaseMs: 10_000,
        scope: { jobIds: [r.id] },
      });
    await worker().runOnce();
    expect((await getRedrive(operator, meta(), { jobId: r.id })).redrive).toMatchObject({
      stage: "awaiting_bulk",
      sampleVerdict: "inconclusive",
    });
    await continueAnyway(r.id);

    const running = worker().runOnce();
    while ((await kit.depth(source)) < n / 4) await sleep(20);
    rabbitmqctl("stop_app");
    let paused: Record<string, number>;
    try {
      // A deadline, so that a run that never pauses fails here and the finally block restarts the
      // broker (a test timeout would leave RabbitMQ stopped for everything after it).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        running,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error("the redrive did not pause within 90 s of the broker stopping")),
            90_000,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      const v = (await getRedrive(operator, meta(), { jobId: r.id })).redrive;
      expect(v.state).toBe("paused");
      expect(v.pauseReason).toMatch(
        /^Paused: .*cannot be reached.*still in the DLQ; the redrive resumes by itself once the broker answers again/s,
      );
      expect(await resumeReachable({ jobIds: [r.id] })).toEqual([]); // not while the broker is down
      paused = await ledgerStates(r.id);
    } finally {
      rabbitmqctl("start_app");
      rabbitmqctl("await_startup");
    }
    // Letters the broker's going away interrupted are not failed: they wait for the resume.
    expect(paused.failed ?? 0).toBe(0);
    expect(paused.missing ?? 0).toBe(0);
    expect((paused.pending ?? 0) + (paused.interrupted ?? 0)).toBeGreaterThan(0);

    // Resumed by itself once the broker answers (the console's worker runs this every 10 s); the adapter reconnects.
    expect(await resumeReachable({ jobIds: [r.id] })).toEqual([r.id]);
    await worker().runOnce();
    expect((await jobStore().get(r.id))!.state).toBe("succeeded");
    const states = await ledgerStates(r.id);
    const c = await countOverBroker(r.id, dlq, source, n);
    console.log(`[faults] outage: ${JSON.stringify({ paused, ledger: states, ...c })}`);
    expect(states).toEqual({ moved: n }); // every letter that failed while the broker was away was retried
    expect(c.lost).toBe(0);
    expect(c.distinctAtOrigin).toBe(n); // every letter reached its origin (the ledger's "moved" is true)
    // Acks sent just before stop_app can be lost with the broker (AMQP 0-9-1 does not confirm an
    // ack): such a letter is at its origin (confirmed, recorded moved) and back in the DLQ as well
    // (seen in CI: 64 of 1,500, one window). The resumed run removes those DLQ copies first.
    expect(c.inDlq).toBe(0);
    expect(c.untagged).toBe(0);
    expect(c.duplicates).toBeLessThanOrEqual(OUTAGE_IN_FLIGHT); // letters in flight when the broker stopped, sent again on resume
    const leftovers = await getDb().auditEvent.findMany({
      where: { operationId: r.id, action: "redrive.leftovers_removed" },
    });
    console.log(
      `[faults] outage leftovers removed on resume: ${leftovers.map((e) => (e.details as { removed: number }).removed).join(", ") || "none"}`,
    );
    expect(await getDb().redriveLetter.count({ where: { jobId: r.id, leftoverCheck: true } })).toBe(0);
  }, 180_000);

  it("leaves other tests' jobs alone: the leftover queued job and the one whose holder died were never claimed", async () => {
    const [queued, orphan] = await Promise.all(decoys.map(async (id) => (await jobStore().get(id))!));
    expect(queued).toMatchObject({ state: "queued", attempts: 0, leaseOwner: null });
    expect(orphan).toMatchObject({ state: "running", attempts: 0, leaseOwner: "long-gone" });
  });
});
