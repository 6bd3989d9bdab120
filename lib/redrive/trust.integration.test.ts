import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, updateUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import type { Role } from "@/lib/auth/permissions";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { loadMaskingConfig, saveMaskingConfig } from "@/lib/masking/store";
import { scanHandler } from "@/lib/triage/scan";
import { resumeReachable } from "./auto-resume";
import { redriveHandler, type RedriveDeps } from "./handler";
import { getRedrive, planRedrive, startBulk, startRedrive } from "./use-cases";

/**
 * A redrive trusts its start no more. Whoever it acts for is asked again on every run,
 * every auto-resume and during a long run; a destination must protect payloads at least as well as
 * the DLQ unless an admin confirms; and of two concurrent starts of stage 2 exactly one wins
 * without pausing the job again. Real RabbitMQ, real Postgres, the real worker.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `trust-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new RabbitKit();
const FAST: Partial<RedriveDeps> = { returnCheckMs: 300, verifyGraceMs: 1000 };
const admin = {} as Actor;

async function user(role: Role): Promise<Actor> {
  const u = await createUser({
    email: `${role}-${randomUUID().slice(0, 8)}@trust.test`,
    role,
    password: "a-long-enough-password",
  });
  return { id: u.id, email: u.email, name: null, role };
}

let sensitiveBefore: Awaited<ReturnType<typeof loadMaskingConfig>>["sensitive"] = [];
beforeAll(async () => {
  Object.assign(admin, await user("admin"));
  sensitiveBefore = (await loadMaskingConfig()).sensitive;
});
afterAll(async () => {
  const c = await loadMaskingConfig();
  await saveMaskingConfig({ rules: c.rules, sensitive: sensitiveBefore }, "trust-test");
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function markSensitive(...patterns: string[]) {
  const c = await loadMaskingConfig();
  await saveMaskingConfig(
    { rules: c.rules, sensitive: [...c.sensitive, ...patterns.map((pattern) => ({ connectionId: CONN, pattern }))] },
    "trust-test",
  );
}

async function seeded(n: number) {
  const letters = Array.from({ length: n }, (_, i) => ({
    body: enc(`{"order":${i},"card":"4111 1111 1111 1111"}`),
    messageId: `m-${i}`,
    headers: { "x-exception-class": "java.net.SocketTimeoutException" },
  }));
  const { dlq, source } = await kit.dlqByReject(letters);
  const kind = `scan-trust-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: CONN,
    queue: dlq,
    params: { acceptRisk: true },
  });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
  return { dlq, source };
}

const worker = (jobId: string, deps: Partial<RedriveDeps> = {}) =>
  new JobWorker({
    handlers: { redrive: redriveHandler({ ...FAST, ...deps }) },
    owner: `trust-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    pollMs: 50,
    scope: { jobIds: [jobId] },
  });

const selection = { kind: "filter", filter: {} } as const;

async function start(actor: Actor, dlq: string, plan: Record<string, unknown> = {}) {
  const preview = await planRedrive(actor, meta(), { connectionId: CONN, queue: dlq, selection, ...plan });
  return startRedrive(actor, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    fix: "orders 2.3.2 raises the timeout",
    confirmedCount: preview.count,
    watchSeconds: 1,
    ...plan,
  });
}

/**
 * A redrive of `n` letters by `actor` whose sample of 5 is done: paused, awaiting stage 2. Nobody
 * consumes the origin, so the verdict is inconclusive and the rest starts with
 * `continueAnyway`.
 */
async function sampled(actor: Actor, n = 30, plan: Record<string, unknown> = {}) {
  const { dlq, source } = await seeded(n);
  const r = await start(actor, dlq, plan);
  await worker(r.id).runOnce();
  expect((await getRedrive(actor, meta(), { jobId: r.id })).redrive).toMatchObject({
    state: "paused",
    stage: "awaiting_bulk",
    sampleVerdict: "inconclusive",
  });
  return { dlq, source, id: r.id };
}

const CONTINUE_REASON = "Nothing consumes the origin in this test";
/** Starts stage 2 after an inconclusive sample, as an operator would: "continue anyway" with a reason. */
const continueAnyway = (actor: Actor, jobId: string) =>
  startBulk(actor, meta(), { jobId, continueAnywayReason: CONTINUE_REASON });

const moved = async (jobId: string) =>
  Number(
    (
      await getDb().$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid AND state = 'moved'`,
        jobId,
      )
    )[0]!.n,
  );
const auditRows = (jobId: string, action: string) =>
  getDb().auditEvent.findMany({ where: { operationId: jobId, action }, orderBy: { id: "asc" } });

describe("the redrive re-checks who it acts for", () => {
  it("a job whose operator was demoted before stage 2 ran stops at its next run, says why, keeps the rest in the DLQ, and is audited", async () => {
    const operator = await user("operator");
    const { dlq, source, id } = await sampled(operator);
    await continueAnyway(operator, id);
    await updateUser(operator.id, { role: "viewer" });

    await worker(id).runOnce();
    const v = (await getRedrive(admin, meta(), { jobId: id })).redrive;
    expect(v.state).toBe("paused");
    expect(v.pauseReason).toMatch(
      /may no longer run this redrive: their role \(viewer\) no longer allows redrive:bulk/,
    );
    expect(v.pauseReason).toMatch(/still in the DLQ/);
    expect(await kit.depth(dlq)).toBe(25);
    expect(await kit.depth(source)).toBe(5);
    const denied = await auditRows(id, "redrive.auto_pause");
    expect(denied.at(-1)).toMatchObject({ outcome: "denied", actorEmail: operator.email });
    expect(denied.at(-1)!.details).toMatchObject({ permission: "redrive:bulk", why: "role", stage: "bulk" });
  });

  it("a running job stops within its check interval once its operator is disabled: what moved is at its origin, the rest still in the DLQ", async () => {
    const operator = await user("operator");
    const { dlq, source, id } = await sampled(operator, 60, { rate: 10 });
    await continueAnyway(operator, id);
    const w = worker(id, { runnerCheckMs: 200 });
    w.start();
    try {
      const until = Date.now() + 20_000;
      while ((await moved(id)) < 10) {
        if (Date.now() > until) throw new Error("the bulk stage did not move letters");
        await new Promise((r) => setTimeout(r, 50));
      }
      await updateUser(operator.id, { disabled: true });
      const stopBy = Date.now() + 10_000;
      while ((await jobStore().get(id))!.state !== "paused") {
        if (Date.now() > stopBy) throw new Error("the job did not stop");
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await w.stop();
    }
    const v = (await getRedrive(admin, meta(), { jobId: id })).redrive;
    expect(v.pauseReason).toMatch(/their account is disabled/);
    const n = await moved(id);
    expect(n).toBeLessThan(60);
    expect(await kit.depth(source)).toBe(n);
    expect(await kit.depth(dlq)).toBe(60 - n);
    expect((await auditRows(id, "redrive.auto_pause")).at(-1)).toMatchObject({ outcome: "denied" });
  });

  it("auto-resume after a broker outage does not resume the job of a disabled operator: it stays paused, pinned, with the reason, audited", async () => {
    const operator = await user("operator");
    const { dlq, id } = await sampled(operator);
    await continueAnyway(operator, id);
    // What the handler leaves when its broker goes away mid-bulk: paused, to resume by itself.
    await getDb().$executeRawUnsafe(
      `UPDATE jobs SET state = 'paused', lease_owner = NULL, lease_expires_at = NULL, progress = progress || '{"autoResume": true, "pauseReason": "Paused: the broker could not be reached."}'::jsonb WHERE id = $1::uuid`,
      id,
    );
    await updateUser(operator.id, { disabled: true });

    expect(await resumeReachable({ jobIds: [id] })).toEqual([]);
    const j = (await jobStore().get(id))!;
    expect(j.state).toBe("paused");
    expect((j.progress as Record<string, unknown>).autoResume).toBe(false);
    expect((await getRedrive(admin, meta(), { jobId: id })).redrive.pauseReason).toMatch(/their account is disabled/);
    expect((await auditRows(id, "redrive.auto_resume")).at(-1)).toMatchObject({ outcome: "denied" });
    expect(await kit.depth(dlq)).toBe(25);
  });
});

describe("the redrive target must be as protected as the DLQ", () => {
  it("refuses an operator's custom target less protected than a sensitive DLQ, allows an equally sensitive one, and lets only an admin confirm, on record", async () => {
    const operator = await user("operator");
    const { dlq } = await seeded(6);
    const open = await kit.queue(kit.name("open"));
    const guarded = await kit.queue(kit.name("guarded"));
    await markSensitive(dlq, guarded);

    const preview = await planRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      target: { kind: "queue", name: open },
    });
    expect(preview.targetProtection).toMatchObject({
      canConfirm: false,
      lessProtected: [{ kind: "target", queue: open, roles: ["viewer"] }],
    });
    expect(preview.targetProtection.message).toMatch(/marked sensitive/);
    const parkingPreview = await planRedrive(operator, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      parking: { kind: "queue", name: open },
    });
    expect(parkingPreview.targetProtection.lessProtected).toEqual([
      { kind: "parking", queue: open, roles: ["viewer"] },
    ]);
    expect(
      (
        await planRedrive(operator, meta(), {
          connectionId: CONN,
          queue: dlq,
          selection,
          target: { kind: "queue", name: guarded },
        })
      ).targetProtection.message,
    ).toBeNull();
    expect(
      (await planRedrive(operator, meta(), { connectionId: CONN, queue: dlq, selection })).targetProtection.message,
    ).toBeNull();

    const jobsBefore = await getDb().job.count({ where: { kind: "redrive", queue: dlq } });
    await expect(start(operator, dlq, { target: { kind: "queue", name: open } })).rejects.toMatchObject({
      code: "conflict:redrive-target",
      userMessage: expect.stringMatching(/Only an admin can confirm/),
    });
    await expect(start(operator, dlq, { parking: { kind: "queue", name: open } })).rejects.toMatchObject({
      code: "conflict:redrive-target",
    });
    await expect(
      start(operator, dlq, { target: { kind: "queue", name: open }, confirmLessProtected: true }),
    ).rejects.toMatchObject({ code: "forbidden:masking:manage" });
    await expect(start(admin, dlq, { target: { kind: "queue", name: open } })).rejects.toMatchObject({
      code: "conflict:redrive-target",
    });
    expect(await getDb().job.count({ where: { kind: "redrive", queue: dlq } })).toBe(jobsBefore);
    expect(await kit.depth(open)).toBe(0);

    // An equally protected target needs no one's confirmation.
    const ok = await start(operator, dlq, { target: { kind: "queue", name: guarded } });
    await worker(ok.id).runOnce();
    expect(await kit.depth(guarded)).toBe(5);
    expect((await getRedrive(admin, meta(), { jobId: ok.id })).redrive.stage).toBe("awaiting_bulk");
  });

  it("an admin's confirmation is audited and holds only while they are an admin: demoted, the job stops before moving anything more", async () => {
    const boss = await user("admin");
    const { dlq } = await seeded(8);
    const open = await kit.queue(kit.name("open"));
    await markSensitive(dlq);

    const r = await start(boss, dlq, {
      target: { kind: "queue", name: open },
      confirmLessProtected: true,
      sample: { count: 3 },
    });
    const startRow = (await auditRows(r.id, "redrive.start")).at(-1)!;
    expect(startRow.details).toMatchObject({
      lessProtectedTarget: { confirmed: true, destinations: [{ kind: "target", queue: open, roles: ["viewer"] }] },
    });
    await worker(r.id).runOnce();
    expect(await kit.depth(open)).toBe(3);

    await updateUser(boss.id, { role: "operator" });
    await continueAnyway(boss, r.id);
    await worker(r.id).runOnce();
    const v = (await getRedrive(admin, meta(), { jobId: r.id })).redrive;
    expect(v.state).toBe("paused");
    expect(v.pauseReason).toMatch(/no longer allows masking:manage/);
    expect(await kit.depth(open)).toBe(3);
    expect(await kit.depth(dlq)).toBe(5);
  });
});

describe("starting stage 2", () => {
  it("of concurrent starts exactly one wins, and the job runs the rest instead of pausing again", async () => {
    const operator = await user("operator");
    const { dlq, source, id } = await sampled(operator);
    const tries = await Promise.allSettled(Array.from({ length: 4 }, () => continueAnyway(operator, id)));
    expect(tries.filter((t) => t.status === "fulfilled")).toHaveLength(1);
    for (const t of tries.filter((x) => x.status === "rejected"))
      expect((t as PromiseRejectedResult).reason).toMatchObject({ code: "conflict:redrive" });
    // Only the start that won is recorded as continuing anyway.
    expect(await auditRows(id, "redrive.continue_anyway")).toEqual([
      expect.objectContaining({ outcome: "success", details: expect.objectContaining({ reason: CONTINUE_REASON }) }),
    ]);
    const plan = await getDb().redrivePlan.findUniqueOrThrow({ where: { jobId: id } });
    expect(plan.stage).toBe("bulk");
    expect((await jobStore().get(id))!.state).toBe("running");

    await worker(id).runOnce();
    expect((await getRedrive(admin, meta(), { jobId: id })).redrive.state).toBe("succeeded");
    expect(await kit.depth(dlq)).toBe(0);
    expect(await kit.depth(source)).toBe(30);
  });
});
