import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db";
import { claimNext, countStates, flushAudit, recordOutcomes, type LetterAuditContext, type Settled } from "./ledger";

/**
 * A batch's outcomes and its letters' audit rows written together (recordOutcomes with `audit`):
 * one row per letter whose outcome is final, in ledger order, none for letters handed back, none
 * for a row another run settled meanwhile, and nothing left owed for flushAudit.
 */
async function ledgerOf(n: number) {
  const db = getDb();
  const queue = `ledger-test-${randomUUID().slice(0, 8)}`;
  const job = await db.job.create({ data: { kind: "redrive", connectionId: "ledger-test", queue } });
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

describe("recordOutcomes with the letters' audit rows", () => {
  it("writes one audit row per final outcome in ledger order, none for letters handed back, nothing owed", async () => {
    const { db, job, ctx } = await ledgerOf(6);
    const rows = await claimNext(db, job.id, "bulk", 6);
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
      { ctx },
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
    await claimNext(db, job.id, "bulk", 2);
    // Another holder recorded m-2 as failed (with its own audit row) before this batch's write.
    await db.$executeRawUnsafe(
      `UPDATE redrive_letters SET state = 'failed' WHERE job_id = $1::uuid AND letter_id = 'm-2'`,
      job.id,
    );
    const before = {
      actor: { id: null, email: "ledger@test.local", role: "admin" as const },
      action: "letter.repaired",
      outcome: "success" as const,
      operationId: job.id,
      scope: "letter" as const,
      target: "m-1",
      details: { outcome: "moved" },
    };
    await recordOutcomes(db, job.id, [settled("m-1", "moved"), settled("m-2", "moved")], { ctx, before: [before] });
    const audit = await db.auditEvent.findMany({ where: { operationId: job.id }, orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.target, a.action])).toEqual([
      ["m-1", "letter.repaired"],
      ["m-1", "letter.redrive"],
    ]);
    // Chained: each row links to the one written before it.
    expect(audit[1].prevHash).toBe(audit[0].hash);
  });
});
