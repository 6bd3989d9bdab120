import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AUDIT_CHAIN_LOCK } from "@/lib/audit/batch";
import { getDb } from "@/lib/db";
import { jobStore, LeaseLostError } from "@/lib/jobs/store";
import {
  breakerWindow,
  claimNext,
  confirmUnconfirmed,
  countStates,
  flushAudit,
  markReturned,
  recordOutcomes,
  releaseClaims,
  type LedgerRow,
  type LetterAuditContext,
  type Settled,
} from "./ledger";

/**
 * A batch's outcomes and its letters' audit rows written together (recordOutcomes with `audit`):
 * one row per letter whose outcome is final, in ledger order, none for letters handed back, none
 * for a row another run settled meanwhile, and nothing left owed for flushAudit. With `owner`,
 * under the job's lease: a run whose lease was taken over changes no letter of its ledger.
 */
async function ledgerOf(n: number, owner = "run-a") {
  const db = getDb();
  const queue = `ledger-test-${randomUUID().slice(0, 8)}`;
  const job = await db.job.create({
    data: {
      kind: "redrive",
      connectionId: "ledger-test",
      queue,
      state: "running",
      leaseOwner: owner,
      leaseExpiresAt: new Date(Date.now() + 60_000),
    },
  });
  await db.$executeRawUnsafe(
    `INSERT INTO redrive_letters (job_id, seq, letter_id, sha256, message_id, original_message_id, prev_count, state, audited)
     SELECT $1::uuid, g, 'm-' || g, repeat('a', 64), 'msg-' || g, 'msg-' || g, g % 2, 'pending', true FROM generate_series(1, $2::int) g`,
    job.id,
    n,
  );
  const ctx: LetterAuditContext = {
    jobId: job.id,
    connectionId: "ledger-test",
    queue,
    actor: { id: null, email: "ledger@test.local", role: "admin" },
  };
  return { db, job, ctx };
}

const settled = (letterId: string, state: Settled["state"], reason: string | null = null): Settled => ({
  letterId,
  state,
  destination: state === "moved" ? "queue target" : null,
  reason,
  orderingKey: null,
});

const repairRow = (jobId: string, target: string) => ({
  actor: { id: null, email: "ledger@test.local", role: "admin" as const },
  action: "letter.repaired",
  outcome: "success" as const,
  operationId: jobId,
  scope: "letter" as const,
  target,
  details: { outcome: "moved" },
});

const statesOf = async (jobId: string) =>
  Object.fromEntries(
    (
      await getDb().$queryRawUnsafe<Array<{ letter_id: string; state: string }>>(
        `SELECT letter_id, state FROM redrive_letters WHERE job_id = $1::uuid ORDER BY seq`,
        jobId,
      )
    ).map((r) => [r.letter_id, r.state]),
  );

/** The holder's lease runs out (as after a long pause, its heartbeats late). */
const expireLease = (jobId: string) =>
  getDb().$executeRawUnsafe(
    `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
    jobId,
  );

/** Another run's worker claims the job, as it does once the lease has run out (null: it did not). */
const claimJob = (jobId: string, owner: string) => jobStore().claim(owner, ["redrive"], 60_000, { jobIds: [jobId] });

async function takeOver(jobId: string, owner: string) {
  await expireLease(jobId);
  return claimJob(jobId, owner);
}

describe("recordOutcomes with the letters' audit rows", () => {
  it("writes one audit row per final outcome in ledger order, none for letters handed back, nothing owed", async () => {
    const { db, job, ctx } = await ledgerOf(6);
    const rows = await claimNext(db, job.id, "bulk", 6, "run-a");
    expect(rows.map((r) => r.letterId)).toEqual(["m-1", "m-2", "m-3", "m-4", "m-5", "m-6"]);
    // Reported out of order, as a move may: the audit rows still follow the ledger.
    await recordOutcomes(
      db,
      job.id,
      [
        settled("m-3", "failed", "refused"),
        settled("m-1", "moved"),
        settled("m-2", "pending", "broker away"),
        settled("m-4", "interrupted"),
        settled("m-6", "parked", "limit"),
        settled("m-5", "unconfirmed"),
      ],
      { ctx, owner: "run-a" },
    );
    const audit = await db.auditEvent.findMany({ where: { operationId: job.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.target, a.action, a.outcome])).toEqual([
      ["m-1", "letter.redrive", "success"],
      ["m-3", "letter.redrive", "failure"],
      ["m-6", "letter.park", "success"],
    ]);
    expect(audit[0].details).toMatchObject({
      state: "moved",
      stage: "bulk",
      destination: "queue target",
      replayId: rows[0].replayId,
      redriveCount: 2,
      attempts: 1,
      messageId: "msg-1",
      sha256: "a".repeat(64),
    });
    expect(audit[1].details).toMatchObject({ state: "failed", reason: "refused", redriveCount: 2 });
    expect(audit[2].details).toMatchObject({ state: "parked", redriveCount: 0 });
    const counts = await countStates(db, job.id);
    expect([
      counts.moved,
      counts.failed,
      counts.pending,
      counts.interrupted,
      counts.parked,
      counts.unconfirmed,
    ]).toEqual([1, 1, 1, 1, 1, 1]);
    // Written with their outcomes: nothing is owed, so a flush writes nothing more.
    expect(await flushAudit(db, ctx)).toBe(0);
  });

  it("gives no audit row to a letter another run settled meanwhile, and writes the rows it is given first", async () => {
    const { db, job, ctx } = await ledgerOf(2);
    await claimNext(db, job.id, "bulk", 2, "run-a");
    // Another holder recorded m-2 as failed (with its own audit row) before this batch's write.
    await db.$executeRawUnsafe(
      `UPDATE redrive_letters SET state = 'failed' WHERE job_id = $1::uuid AND letter_id = 'm-2'`,
      job.id,
    );
    await recordOutcomes(db, job.id, [settled("m-1", "moved"), settled("m-2", "moved")], {
      ctx,
      before: [repairRow(job.id, "m-1")],
      owner: "run-a",
    });
    const audit = await db.auditEvent.findMany({ where: { operationId: job.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.target, a.action])).toEqual([
      ["m-1", "letter.repaired"],
      ["m-1", "letter.redrive"],
    ]);
    // Chained: each row links to the one written before it.
    expect(audit[1].prevHash).toBe(audit[0].hash);
  });
});

describe("claimNext after the run's cursor", () => {
  it("starts after the cursor, and a claim from the start still finds a letter put back before it", async () => {
    const { db, job, ctx } = await ledgerOf(8);
    const first = await claimNext(db, job.id, "bulk", 3, "run-a");
    expect(first.map((r) => r.seq)).toEqual([1, 2, 3]);
    // The broker went away: m-2 goes back to pending, the others are settled.
    await recordOutcomes(
      db,
      job.id,
      [settled("m-1", "moved"), settled("m-2", "pending", "broker away"), settled("m-3", "moved")],
      { ctx, owner: "run-a" },
    );
    const next = await claimNext(db, job.id, "bulk", 3, "run-a", 3);
    expect(next.map((r) => r.letterId)).toEqual(["m-4", "m-5", "m-6"]);
    // From the start (the cursor moved back, or the stage's last look): m-2 first, in index order.
    const again = await claimNext(db, job.id, "bulk", 3, "run-a", -1);
    expect(again.map((r) => [r.letterId, r.prevState])).toEqual([
      ["m-2", "pending"],
      ["m-7", "pending"],
      ["m-8", "pending"],
    ]);
    expect(await claimNext(db, job.id, "bulk", 3, "run-a", -1)).toEqual([]);
  });
});

describe("the breaker's window", () => {
  /** The window as it was read before redrive_moves: the job's moved letters by moved_at, then seq, latest first. */
  const fromLedger = async (jobId: string, window: number, since: Date | null) => {
    const [r] = await getDb().$queryRawUnsafe<Array<{ redriven: number; returned: number }>>(
      `SELECT count(*)::int AS redriven, count(*) FILTER (WHERE state = 'returned')::int AS returned FROM (
         SELECT state FROM redrive_letters
         WHERE job_id = $1::uuid AND moved_at IS NOT NULL AND state IN ('moved', 'returned') AND ($3::timestamptz IS NULL OR moved_at >= $3::timestamptz)
         ORDER BY moved_at DESC, seq DESC LIMIT $2) w`,
      jobId,
      window,
      since,
    );
    return r;
  };

  it("counts the last letters moved, by batch and letter, returns and letters confirmed after a restart included", async () => {
    const { db, job, ctx } = await ledgerOf(30);
    const out = { ctx, owner: "run-a" };
    const b1 = await claimNext(db, job.id, "bulk", 10, "run-a");
    // m-3 failed, m-4 goes back to pending, m-5 is not in the DLQ after an interrupted attempt.
    await recordOutcomes(
      db,
      job.id,
      b1.map((r) =>
        settled(r.letterId, r.seq === 3 ? "failed" : r.seq === 4 ? "pending" : r.seq === 5 ? "unconfirmed" : "moved"),
      ),
      out,
    );
    const [{ t: afterFirst }] = await db.$queryRawUnsafe<Array<{ t: Date }>>(`SELECT now() AS t`);
    const b2 = await claimNext(db, job.id, "bulk", 10, "run-a", 10);
    await recordOutcomes(
      db,
      job.id,
      b2.map((r) => settled(r.letterId, "moved")),
      out,
    );
    const b3 = await claimNext(db, job.id, "bulk", 12, "run-a", -1);
    expect(b3[0].letterId).toBe("m-4");
    await recordOutcomes(
      db,
      job.id,
      b3.map((r) => settled(r.letterId, r.seq === 25 ? "failed" : "moved")),
      out,
    );
    expect(await confirmUnconfirmed(db, job.id, 3, false, "run-a")).toBe(1);
    // Back in the DLQ: two of the first batch, one of the second, one of the last.
    const replay = (rows: typeof b1, seq: number) => rows.find((r) => r.seq === seq)!.replayId!;
    expect(
      await markReturned(db, job.id, [replay(b1, 1), replay(b1, 9), replay(b2, 15), replay(b3, 30)], "run-a"),
    ).toBe(4);
    for (const since of [null, afterFirst]) {
      for (const window of [1, 3, 5, 10, 11, 12, 20, 26, 27, 100]) {
        const expected = await fromLedger(job.id, window, since);
        expect({ window, since, ...(await breakerWindow(db, job.id, window, since)) }).toEqual({
          window,
          since,
          ...expected,
        });
      }
    }
    // Every letter moved (28 of 30: m-3 and m-25 failed; m-4 moved later, m-5 confirmed after the restart), 4 returned.
    expect(await breakerWindow(db, job.id, 100, null)).toEqual({ redriven: 28, returned: 4 });
    expect(await breakerWindow(db, job.id, 1, null)).toEqual({ redriven: 1, returned: 0 });
  });
});

describe("the lease fence on a redrive's ledger", () => {
  it("a run whose lease was taken over claims nothing and records no outcome: its letters stay claimed for the new holder", async () => {
    const { db, job, ctx } = await ledgerOf(4);
    const mine = await claimNext(db, job.id, "bulk", 2, "run-a");
    expect(mine.map((r) => r.letterId)).toEqual(["m-1", "m-2"]);
    expect((await takeOver(job.id, "run-b"))?.id).toBe(job.id);
    // The old holder's write comes after the takeover: refused whole, outcomes and their audit rows.
    await expect(
      recordOutcomes(db, job.id, [settled("m-1", "moved"), settled("m-2", "pending")], {
        ctx,
        before: [repairRow(job.id, "m-1")],
        owner: "run-a",
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(claimNext(db, job.id, "bulk", 2, "run-a")).rejects.toBeInstanceOf(LeaseLostError);
    expect(await statesOf(job.id)).toEqual({ "m-1": "moving", "m-2": "moving", "m-3": "pending", "m-4": "pending" });
    // Only what was done to the letter (the repair row) is on record: it happened whoever holds the lease.
    const audit = await db.auditEvent.findMany({ where: { operationId: job.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.target, a.action])).toEqual([["m-1", "letter.repaired"]]);
    // The new holder claims what is left, and its own writes go through.
    expect((await claimNext(db, job.id, "bulk", 4, "run-b")).map((r) => r.letterId)).toEqual(["m-3", "m-4"]);
    await recordOutcomes(db, job.id, [settled("m-3", "moved"), settled("m-4", "moved")], { ctx, owner: "run-b" });
    expect(await statesOf(job.id)).toEqual({ "m-1": "moving", "m-2": "moving", "m-3": "moved", "m-4": "moved" });
  });

  it("a run whose lease was taken over confirms no letter after restart and marks none returned", async () => {
    const { db, job, ctx } = await ledgerOf(3);
    const rows = await claimNext(db, job.id, "bulk", 3, "run-a");
    await recordOutcomes(
      db,
      job.id,
      [settled("m-1", "moved"), settled("m-2", "unconfirmed"), settled("m-3", "moved")],
      {
        ctx,
        owner: "run-a",
      },
    );
    const replayOf3 = rows.find((r) => r.letterId === "m-3")!.replayId!;
    expect((await takeOver(job.id, "run-b"))?.id).toBe(job.id);
    await expect(markReturned(db, job.id, [replayOf3], "run-a")).rejects.toBeInstanceOf(LeaseLostError);
    await expect(confirmUnconfirmed(db, job.id, 3, false, "run-a")).rejects.toBeInstanceOf(LeaseLostError);
    expect(await statesOf(job.id)).toEqual({ "m-1": "moved", "m-2": "unconfirmed", "m-3": "moved" });
    // The holder's own writes go through.
    expect(await markReturned(db, job.id, [replayOf3], "run-b")).toBe(1);
    expect(await confirmUnconfirmed(db, job.id, 3, false, "run-b")).toBe(1);
    expect(await statesOf(job.id)).toEqual({ "m-1": "moved", "m-2": "moved", "m-3": "returned" });
  });

  it("no run takes the job over while its holder's outcome write is under way, even one waiting for the audit chain", async () => {
    const { db, job, ctx } = await ledgerOf(3);
    await claimNext(db, job.id, "bulk", 3, "run-a");
    // Another writer holds the audit chain: the holder's write locks its rows, then waits for the chain.
    let release!: () => void;
    let locked!: () => void;
    const chainLocked = new Promise<void>((r) => (locked = r));
    const chain = db.$transaction(
      async (tx) => {
        await tx.$queryRawUnsafe(`SELECT 1 AS locked FROM pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`);
        locked();
        await new Promise<void>((r) => (release = r));
      },
      { timeout: 30_000 },
    );
    await chainLocked;
    const write = recordOutcomes(
      db,
      job.id,
      [settled("m-1", "moved"), settled("m-2", "pending"), settled("m-3", "interrupted")],
      { ctx, owner: "run-a" },
    );
    // Until the write has its rows (m-2 and m-3 go back to be asked for again, uncommitted).
    for (let i = 0; ; i++) {
      if (i === 400) throw new Error("the outcome write never waited for the audit chain");
      const waiting = await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
      );
      if (waiting[0].n > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // Meanwhile another run's claim of the letters would pass over the rows the write holds: were
    // it to hold the job, it would find nothing left to ask for and finish, and the write would then
    // put m-2 and m-3 back to be asked for under a finished job. The lease fence keeps it off the job.
    expect(await claimNext(db, job.id, "bulk", 3)).toEqual([]);
    // The holder's heartbeat goes through meanwhile (the write overlaps the next batch, which
    // checkpoints), and so does its lease running out; a claim of the job does not.
    await jobStore().heartbeat(job.id, "run-a", 60_000);
    await expireLease(job.id);
    expect(await claimJob(job.id, "run-b")).toBeNull();
    release();
    await chain;
    await write;
    expect(await statesOf(job.id)).toEqual({ "m-1": "moved", "m-2": "pending", "m-3": "interrupted" });
    // Now the lease can be taken over, and the new holder finds the letters as the old one left them.
    expect((await claimJob(job.id, "run-b"))?.id).toBe(job.id);
    expect((await claimNext(db, job.id, "bulk", 3, "run-b")).map((r) => r.letterId)).toEqual(["m-2", "m-3"]);
  });
});

describe("claimed rows on the direct pool and through Prisma", () => {
  it("come back the same, field by field and type by type, whether read as rows (a fenced claim) or as json (no owner)", async () => {
    const a = await ledgerOf(4);
    const b = await ledgerOf(4);
    const direct = await claimNext(a.db, a.job.id, "bulk", 4, "run-a"); // fenced: DirectTx, rows as arrays
    const viaPrisma = await claimNext(b.db, b.job.id, "bulk", 4); // no owner: Prisma, one json value
    const shape = (rows: LedgerRow[]) =>
      rows.map((r) => ({
        ...r,
        id: typeof r.id,
        replayId: typeof r.replayId,
        updatedAt: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.updatedAt),
      }));
    expect(shape(direct)).toEqual(shape(viaPrisma));
    expect(direct[0]).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      seq: 1,
      letterId: "m-1",
      prevCount: 1,
      attempts: 1,
      state: "moving",
      stage: "bulk",
      movedAt: null,
      prevState: "pending",
    });
  });
});

describe("claims given back unmoved (releaseClaims: a batch claimed ahead when the run stops)", () => {
  const rowsOf = async (jobId: string) =>
    (
      await getDb().$queryRawUnsafe<Array<{ letter_id: string; state: string; attempts: number }>>(
        `SELECT letter_id, state, attempts FROM redrive_letters WHERE job_id = $1::uuid ORDER BY seq`,
        jobId,
      )
    ).map((r) => [r.letter_id, r.state, r.attempts]);

  it("puts each row back as the claim found it, its attempt taken back; a row settled meanwhile stays settled", async () => {
    const { db, job, ctx } = await ledgerOf(4);
    // m-2 had an attempt interrupted earlier (claimed once, then made "interrupted").
    await claimNext(db, job.id, "bulk", 2, "run-a");
    await recordOutcomes(db, job.id, [settled("m-1", "moved"), settled("m-2", "interrupted")], { ctx, owner: "run-a" });
    const ahead = await claimNext(db, job.id, "bulk", 3, "run-a", -1);
    expect(ahead.map((r) => [r.letterId, r.prevState, r.attempts])).toEqual([
      ["m-2", "interrupted", 2],
      ["m-3", "pending", 1],
      ["m-4", "pending", 1],
    ]);
    // Another run of the job settled m-4 meanwhile (as after a takeover): the release leaves it.
    await db.$executeRawUnsafe(
      `UPDATE redrive_letters SET state = 'moved' WHERE job_id = $1::uuid AND letter_id = 'm-4'`,
      job.id,
    );
    expect(await releaseClaims(db, job.id, ahead, "run-a")).toBe(2);
    expect(await rowsOf(job.id)).toEqual([
      ["m-1", "moved", 1],
      ["m-2", "interrupted", 1],
      ["m-3", "pending", 0],
      ["m-4", "moved", 1],
    ]);
    // Claimed again, in index order, as if the release had never been claimed.
    expect((await claimNext(db, job.id, "bulk", 3, "run-a", -1)).map((r) => [r.letterId, r.prevState])).toEqual([
      ["m-2", "interrupted"],
      ["m-3", "pending"],
    ]);
  });

  it("is refused once the lease was taken over: the rows stay claimed for the new holder", async () => {
    const { db, job } = await ledgerOf(2);
    const ahead = await claimNext(db, job.id, "bulk", 2, "run-a");
    expect((await takeOver(job.id, "run-b"))?.id).toBe(job.id);
    await expect(releaseClaims(db, job.id, ahead, "run-a")).rejects.toBeInstanceOf(LeaseLostError);
    expect(await statesOf(job.id)).toEqual({ "m-1": "moving", "m-2": "moving" });
  });
});
