import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { Client } from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openPayload } from "@/lib/archive/store";
import { sweepArchive } from "@/lib/archive/retention";
import { exportArchive, listArchive, viewArchived } from "@/lib/archive/use-cases";
import { restoreArchived } from "@/lib/discard/undo";
import { createUser, updateUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { viewAudit } from "@/lib/audit-log/use-cases";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "@/lib/triage/scan";
import { discardHandler, type DiscardDeps } from "./handler";
import { cancelDiscard, getDiscard, listDiscards, planDiscard, startDiscard } from "./use-cases";

/** DDL is the owner's: scripts/test.sh runs the suite as the console's role, which may not create triggers. */
async function asOwner(sql: string) {
  const c = new Client({ connectionString: process.env.DATABASE_OWNER_URL ?? process.env.DATABASE_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Discard end to end on the real RabbitMQ and Postgres: letters dead-lettered by real rejection,
 * scanned into the triage index, discarded through the use cases and the job worker (archive row
 * committed before the broker removes), then put back by undo; retention and refusals.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `dc-${randomUUID()}`, ip: "127.0.0.1" });
const actors: Record<"viewer" | "operator" | "admin", Actor> = {} as never;
const kit = new RabbitKit();
const SECRET = (i: number) => `tok-${i}-s3cr3t-${randomUUID().slice(0, 6)}`;

beforeAll(async () => {
  for (const role of ["viewer", "operator", "admin"] as const) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@discard.test`,
      role,
      password: "a-long-enough-password",
    });
    actors[role] = { id: u.id, email: u.email, name: null, role };
  }
});
beforeEach(async () => {
  // Jobs left active by an interrupted earlier run of this file must not be claimed by these tests.
  await getDb().$executeRawUnsafe(
    `UPDATE jobs SET state = 'cancelled', lease_owner = NULL WHERE kind = 'discard' AND state IN ('queued', 'running', 'cancelling', 'paused')`,
  );
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

const letters = (n: number, secrets: string[] = []) =>
  Array.from({ length: n }, (_, i) => {
    secrets[i] = SECRET(i);
    return {
      body: enc(JSON.stringify({ order: i, token: secrets[i] })),
      messageId: `m-${i}`,
      headers: { "x-exception-class": "com.acme.InvalidOrder", "x-order": String(i) },
    };
  });

async function scan(queue: string) {
  const kind = `scan-dc-${randomUUID().slice(0, 8)}`;
  const job = await jobStore().enqueue({
    kind: kind as "scan",
    connectionId: CONN,
    queue,
    params: { acceptRisk: true },
  });
  await new JobWorker({ handlers: { [kind]: scanHandler() }, owner: `scan-${kind}`, leaseMs: 10_000 }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
}

async function seeded(n: number) {
  const secrets: string[] = [];
  const { dlq } = await kit.dlqByReject(letters(n, secrets));
  await scan(dlq);
  return { dlq, secrets };
}

const worker = (deps: Partial<DiscardDeps> = {}, leaseMs = 10_000) =>
  new JobWorker({
    handlers: { discard: discardHandler(deps) },
    owner: `dc-${randomUUID().slice(0, 6)}`,
    leaseMs,
    pollMs: 50,
  });

async function start(dlq: string, selection: unknown, reason = "Orders for a retired product line; never valid") {
  const preview = await planDiscard(actors.admin, meta(), { connectionId: CONN, queue: dlq, selection });
  return startDiscard(actors.admin, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    reason,
    confirmedCount: preview.count,
  });
}

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

/** The index's letter ids of these message ids (RabbitMQ letter ids encode the message id). */
async function idsOf(dlq: string, messageIds: string[]): Promise<string[]> {
  const rows = await getDb().$queryRawUnsafe<Array<{ letter_id: string; message_id: string }>>(
    `SELECT letter_id, message_id FROM triage_letters WHERE connection_id = $1 AND queue = $2`,
    CONN,
    dlq,
  );
  const by = new Map(rows.map((r) => [r.message_id, r.letter_id]));
  return messageIds.map((m) => by.get(m)!);
}
/** Ledger states by message id. */
const ledger = async (jobId: string) =>
  Object.fromEntries(
    (
      await getDb().$queryRawUnsafe<Array<{ message_id: string; state: string }>>(
        `SELECT message_id, state FROM discard_letters WHERE job_id = $1::uuid ORDER BY seq`,
        jobId,
      )
    ).map((r) => [r.message_id, r.state]),
  );
const archiveRows = (jobId: string) =>
  getDb().$queryRawUnsafe<
    Array<{
      id: string;
      letter_id: string;
      message_id: string;
      connection_id: string;
      queue: string;
      discard_job_id: string;
      payload_ciphertext: Uint8Array;
      payload_key_id: string;
      envelope_ciphertext: Uint8Array;
    }>
  >(
    `SELECT id::text AS id, letter_id, message_id, connection_id, queue, discard_job_id::text AS discard_job_id, payload_ciphertext, payload_key_id, envelope_ciphertext FROM archived_letters WHERE discard_job_id = $1::uuid ORDER BY message_id`,
    jobId,
  );
const auditRows = (operationId: string) =>
  getDb().$queryRawUnsafe<
    Array<{
      action: string;
      scope: string;
      outcome: string;
      target: string | null;
      actor_email: string | null;
      details: Record<string, unknown>;
    }>
  >(
    `SELECT action, scope, outcome, target, actor_email, details FROM audit_log WHERE operation_id = $1::uuid ORDER BY id`,
    operationId,
  );

describe("discard on RabbitMQ", () => {
  it("discards hand-picked letters: the others stay in order, archive rows are encrypted, one audit row per letter under the operation", async () => {
    const { dlq, secrets } = await seeded(8);
    const pickedMessages = ["m-1", "m-3", "m-4"];
    const picked = await idsOf(dlq, pickedMessages);
    const preview = await planDiscard(actors.admin, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection: { kind: "letters", letterIds: picked },
    });
    expect(preview.count).toBe(3);
    await expect(
      startDiscard(actors.admin, meta(), {
        connectionId: CONN,
        queue: dlq,
        selection: { kind: "letters", letterIds: picked },
        reason: "x invalid",
        confirmedCount: 2,
      }),
    ).rejects.toMatchObject({ code: "conflict:count" });
    await expect(
      startDiscard(actors.admin, meta(), {
        connectionId: CONN,
        queue: dlq,
        selection: { kind: "letters", letterIds: picked },
        confirmedCount: 3,
      }),
    ).rejects.toMatchObject({ code: "bad_request:discard" });

    const job = await start(dlq, { kind: "letters", letterIds: picked });
    expect(job).toMatchObject({ state: "queued", total: 3 });
    await worker().runOnce();
    const v = await getDiscard(actors.viewer, meta(), { jobId: job.id });
    expect(v.discard.state).toBe("succeeded");
    expect(v.counts).toMatchObject({ discarded: 3, failed: 0, pending: 0 });
    expect(v.discard.progress).toMatchObject({ discarded: 3, total: 3 });
    // The ledger and the audit log record each letter's SHA-256: a reader who sees payloads masked
    // is shown the keyed digest, never the SHA-256 a guessed payload could be checked against.
    const rawShas = (await getDb().discardLetter.findMany({ where: { jobId: job.id } })).map((r) => r.sha256);
    expect(v.ledger.map((r) => r.sha256.startsWith("hmac:"))).toEqual([true, true, true]);
    const viewed = await viewAudit(actors.operator, meta(), { filter: { queue: dlq, action: "letter.discard" } });
    expect(viewed.rows).toHaveLength(3);
    for (const sha of rawShas) expect(JSON.stringify([v, viewed])).not.toContain(sha);
    // The lists (this DLQ's, and across every DLQ): read as the job page is, by any role.
    const listed = await listDiscards(actors.viewer, meta(), { connectionId: CONN, queue: dlq });
    expect(listed.map((d) => d.id)).toEqual([job.id]);
    expect(listed[0]).toMatchObject({
      state: "succeeded",
      total: 3,
      reason: "Orders for a retired product line; never valid",
      createdBy: actors.admin.email,
      progress: { discarded: 3 },
    });
    expect((await listDiscards(actors.operator, meta(), {})).map((d) => d.id)).toContain(job.id);

    const left = await peek(dlq, 5);
    expect(left.map((m) => m.properties.messageId)).toEqual(["m-0", "m-2", "m-5", "m-6", "m-7"]);

    const rows = await archiveRows(job.id);
    expect(rows.map((r) => r.message_id)).toEqual(pickedMessages);
    for (const r of rows) {
      const i = Number(r.message_id.slice(2));
      const stored = Buffer.from(r.payload_ciphertext);
      expect(stored.includes(Buffer.from(secrets[i]))).toBe(false);
      expect(stored.includes(Buffer.from('"order"'))).toBe(false);
      expect(Buffer.from(r.envelope_ciphertext).includes(Buffer.from(r.message_id))).toBe(false);
      const plain = openPayload({
        connectionId: r.connection_id,
        queue: r.queue,
        letterId: r.letter_id,
        discardJobId: r.discard_job_id,
        payloadCiphertext: r.payload_ciphertext,
        payloadKeyId: r.payload_key_id,
      });
      expect(plain.toString()).toBe(JSON.stringify({ order: i, token: secrets[i] }));
    }

    const audit = await auditRows(job.id);
    expect(audit.filter((a) => a.action === "discard.start")).toHaveLength(1);
    const perLetter = audit.filter((a) => a.action === "letter.discard");
    expect(perLetter.map((a) => a.target).sort()).toEqual([...picked].sort());
    expect(
      perLetter.every((a) => a.scope === "letter" && a.outcome === "success" && a.actor_email === actors.admin.email),
    ).toBe(true);
    expect(perLetter[0].details).toMatchObject({
      state: "discarded",
      discardReason: "Orders for a retired product line; never valid",
    });
    expect(audit.find((a) => a.action === "discard.finished")?.details).toMatchObject({
      state: "succeeded",
      discarded: 3,
    });
    // Nothing of the payload in the audit log.
    expect(JSON.stringify(audit)).not.toContain(secrets[1]);

    const gone = await getDb().$queryRawUnsafe<Array<{ message_id: string }>>(
      `SELECT message_id FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NOT NULL ORDER BY message_id`,
      CONN,
      dlq,
    );
    expect(gone.map((g) => g.message_id)).toEqual(pickedMessages);
  });

  it("leaves a letter that changed since it was indexed (checksum mismatch) in the DLQ", async () => {
    const { dlq } = await seeded(4);
    await getDb().$executeRawUnsafe(
      `UPDATE triage_letters SET sha256 = repeat('0', 64) WHERE connection_id = $1 AND queue = $2 AND message_id = 'm-2'`,
      CONN,
      dlq,
    );
    // The whole group (all four letters share the exception class), as the triage page's group link names it.
    const [g] = await getDb().$queryRawUnsafe<Array<{ group_key: string }>>(
      `SELECT group_key FROM triage_groups WHERE connection_id = $1 AND queue = $2`,
      CONN,
      dlq,
    );
    const byGroup = await planDiscard(actors.admin, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection: { kind: "group", groupKey: g.group_key },
    });
    expect(byGroup).toMatchObject({ count: 4, scope: `group ${g.group_key}` });
    expect(
      (
        await planDiscard(actors.admin, meta(), {
          connectionId: CONN,
          queue: dlq,
          selection: { kind: "group", groupKey: "no-such-group" },
        })
      ).count,
    ).toBe(0);
    const job = await start(dlq, { kind: "group", groupKey: g.group_key });
    await worker().runOnce();
    expect(await ledger(job.id)).toEqual({
      "m-0": "discarded",
      "m-1": "discarded",
      "m-2": "checksum_mismatch",
      "m-3": "discarded",
    });
    const left = await peek(dlq, 1);
    expect(left[0].properties.messageId).toBe("m-2");
    expect((await archiveRows(job.id)).map((r) => r.message_id)).toEqual(["m-0", "m-1", "m-3"]);
    const [m2] = await idsOf(dlq, ["m-2"]);
    const a = (await auditRows(job.id)).find((r) => r.action === "letter.discard" && r.target === m2);
    expect(a).toMatchObject({ outcome: "failure", details: { state: "checksum_mismatch" } });
    // The discard does not end as a plain success: its last audit row says what is left.
    const finished = (await auditRows(job.id)).find((r) => r.action === "discard.finished");
    expect(finished).toMatchObject({
      outcome: "failure",
      details: { summary: "3 discarded, 1 failed and still in the DLQ", result: { complete: false, left: 1 } },
    });
  });

  it("leaves a letter in the DLQ when its archive write fails, recorded with the reason", async () => {
    const { dlq } = await seeded(3);
    const fn = `dlq_test_fail_${randomUUID().replace(/-/g, "").slice(0, 8)}`;
    await asOwner(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.queue = '${dlq}' AND NEW.message_id = 'm-1' THEN RAISE EXCEPTION 'archive disk full (test)'; END IF; RETURN NEW; END $$`,
    );
    await asOwner(`CREATE TRIGGER ${fn} BEFORE INSERT ON archived_letters FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    try {
      const job = await start(dlq, { kind: "filter", filter: {} });
      await worker().runOnce();
      expect(await ledger(job.id)).toEqual({ "m-0": "discarded", "m-1": "failed", "m-2": "discarded" });
      const v = await getDiscard(actors.admin, meta(), { jobId: job.id, state: "failed" });
      expect(v.ledger[0].reason).toMatch(/archive copy could not be written/);
      expect(v.ledger[0].reason).not.toMatch(/disk full/);
      const left = await peek(dlq, 1);
      expect(left[0].properties.messageId).toBe("m-1");
      expect((await archiveRows(job.id)).map((r) => r.message_id)).toEqual(["m-0", "m-2"]);
    } finally {
      await asOwner(`DROP TRIGGER IF EXISTS ${fn} ON archived_letters`);
      await asOwner(`DROP FUNCTION IF EXISTS ${fn}()`);
    }
  });

  it("cancels at the next batch: letters not yet discarded stay in the DLQ", async () => {
    const { dlq } = await seeded(6);
    const job = await start(dlq, { kind: "filter", filter: {} });
    await worker({
      batchSize: 2,
      afterBatch: async (id, n) => {
        if (n === 1) await cancelDiscard(actors.admin, meta(), { jobId: id });
      },
    }).runOnce();
    const v = await getDiscard(actors.admin, meta(), { jobId: job.id });
    expect(v.discard.state).toBe("cancelled");
    expect(v.counts).toMatchObject({ discarded: 2, pending: 4 });
    expect((await peek(dlq, 4)).map((m) => m.properties.messageId)).toEqual(["m-2", "m-3", "m-4", "m-5"]);
    const audit = await auditRows(job.id);
    expect(audit.filter((a) => a.action === "letter.discard")).toHaveLength(2);
    expect(audit.find((a) => a.action === "discard.cancel")).toMatchObject({ outcome: "success" });
    expect(audit.find((a) => a.action === "discard.finished")?.details).toMatchObject({ state: "cancelled" });
  });

  it("a discard cancelled before it ran ends with a result: nothing discarded, every letter still in the DLQ", async () => {
    const { dlq } = await seeded(3);
    const job = await start(dlq, { kind: "filter", filter: {} });
    await cancelDiscard(actors.admin, meta(), { jobId: job.id });
    const v = await getDiscard(actors.admin, meta(), { jobId: job.id });
    expect(v.discard.state).toBe("cancelled");
    const summary = "3 not discarded, still in the DLQ";
    expect(v.discard.progress).toMatchObject({ result: { complete: false, left: 3, summary } });
    const finished = (await auditRows(job.id)).find((a) => a.action === "discard.finished");
    expect(finished).toMatchObject({ outcome: "failure" });
    expect(finished?.details).toMatchObject({ state: "cancelled", summary });
    expect(await peek(dlq, 3)).toHaveLength(3);
  });

  it("resumes after a lost lease: a second worker finishes, every letter archived and discarded once", async () => {
    const { dlq } = await seeded(7);
    const job = await start(dlq, { kind: "filter", filter: {} });
    // After the first batch the lease is taken over (the process is presumed dead), and the ledger
    // write of one discarded letter is "lost" (back to removing): the next run must not lose it.
    const first = worker({
      batchSize: 3,
      afterBatch: async (id, n) => {
        if (n !== 1) return;
        await getDb().$executeRawUnsafe(
          `UPDATE discard_letters SET state = 'removing' WHERE job_id = $1::uuid AND message_id = 'm-2'`,
          id,
        );
        await getDb().$executeRawUnsafe(
          `UPDATE jobs SET lease_owner = 'someone-else', lease_expires_at = now() + interval '1 minute' WHERE id = $1::uuid`,
          id,
        );
      },
    });
    await first.runOnce();
    expect((await jobStore().get(job.id))?.state).toBe("running");
    expect(await kit.depth(dlq)).toBe(4);
    await getDb().$executeRawUnsafe(
      `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
      job.id,
    );
    await worker({ batchSize: 3 }).runOnce();
    const v = await getDiscard(actors.admin, meta(), { jobId: job.id });
    expect(v.discard.state).toBe("succeeded");
    expect(v.counts).toMatchObject({ discarded: 7, failed: 0, missing: 0, pending: 0, removing: 0 });
    expect(await kit.depth(dlq)).toBe(0);
    expect((await archiveRows(job.id)).map((r) => r.message_id)).toEqual([
      "m-0",
      "m-1",
      "m-2",
      "m-3",
      "m-4",
      "m-5",
      "m-6",
    ]);
    const perLetter = (await auditRows(job.id)).filter((a) => a.action === "letter.discard");
    expect(new Set(perLetter.map((a) => a.target)).size).toBe(7);
    expect(perLetter.every((a) => a.outcome === "success")).toBe(true);
  });

  it("undo re-publishes byte-identical letters once; the archive row records who and when", async () => {
    const { dlq } = await seeded(3);
    const before = await peek(dlq, 3);
    const job = await start(dlq, { kind: "filter", filter: {} });
    await worker().runOnce();
    expect(await kit.depth(dlq)).toBe(0);
    const ids = (await archiveRows(job.id)).map((r) => r.id);

    // Two undo requests for the same letters at once: each letter goes back exactly once.
    const [a, b] = await Promise.all([
      restoreArchived(actors.admin, meta(), { ids, reason: "Discarded by mistake (ORD-9)" }),
      restoreArchived(actors.admin, meta(), { ids, reason: "Discarded by mistake (ORD-9)" }),
    ]);
    expect(a.restored + b.restored).toBe(3);
    expect(a.skipped + b.skipped).toBe(3);
    const after = await peek(dlq, 3);
    const key = (m: amqp.ConsumeMessage) => m.properties.messageId as string;
    const byId = new Map(after.map((m) => [key(m), m]));
    for (const m of before) {
      const r = byId.get(key(m))!;
      expect(Buffer.compare(r.content, m.content)).toBe(0);
      expect(r.properties.headers?.["x-order"]).toBe(m.properties.headers?.["x-order"]);
    }
    const list = await listArchive(actors.viewer, meta(), { filter: { connectionId: CONN, queue: dlq } });
    expect(
      list.rows.every(
        (r) =>
          r.restoreState === "restored" &&
          r.restoredBy === actors.admin.email &&
          r.restoredAt &&
          r.restoreReason === "Discarded by mistake (ORD-9)",
      ),
    ).toBe(true);
    const live = await getDb().$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL`,
      CONN,
      dlq,
    );
    expect(live[0].n).toBe(3); // back in the index's live set without a rescan
    const again = await restoreArchived(actors.admin, meta(), { ids: [ids[0]], reason: "again" });
    expect(again).toMatchObject({ restored: 0, skipped: 1 });
    expect(await kit.depth(dlq)).toBe(3);
    const op = a.restored ? a : b;
    const audit = await auditRows(op.operationId);
    // The attempt is on record before anything was re-published, the result after it.
    expect(audit.slice(0, 2)).toMatchObject([
      { action: "archive.restore_started", scope: "operation", outcome: "success" },
      { action: "archive.restore", scope: "operation", outcome: "success" },
    ]);
    expect(
      audit.filter((r) => r.action === "letter.restore" && r.scope === "letter" && r.outcome === "success"),
    ).toHaveLength(op.restored);
  });

  it("retention sweep deletes expired archive rows only, as an audited system action", async () => {
    const { dlq } = await seeded(2);
    const job = await start(dlq, { kind: "filter", filter: {} });
    await worker().runOnce();
    const rows = await archiveRows(job.id);
    await getDb().$executeRawUnsafe(
      `UPDATE archived_letters SET expires_at = now() - interval '1 minute' WHERE id = $1::uuid`,
      rows[0].id,
    );
    const n = await sweepArchive();
    expect(n).toBeGreaterThanOrEqual(1);
    expect((await archiveRows(job.id)).map((r) => r.id)).toEqual([rows[1].id]);
    const sys = await getDb().$queryRawUnsafe<Array<{ actor_email: string; details: Record<string, unknown> }>>(
      `SELECT actor_email, details FROM audit_log WHERE action = 'archive.retention' ORDER BY id DESC LIMIT 1`,
    );
    expect(sys[0].actor_email).toBe("system");
    expect(JSON.stringify(sys[0].details)).toContain(dlq);
  });

  it("the job checks too: when its admin was demoted before it ran, it removes nothing and the refusal is audited", async () => {
    const { dlq } = await seeded(2);
    const u = await createUser({
      email: `demoted-${randomUUID().slice(0, 8)}@discard.test`,
      role: "admin",
      password: "a-long-enough-password",
    });
    const a: Actor = { id: u.id, email: u.email, name: null, role: "admin" };
    const selection = { kind: "filter", filter: {} };
    const job = await startDiscard(a, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason: "to be refused",
      confirmedCount: 2,
    });
    await updateUser(u.id, { role: "operator" });
    await worker().runOnce();
    const j = (await jobStore().get(job.id))!;
    expect(j.state).toBe("failed");
    expect(j.error).toMatch(/may no longer discard/);
    expect(await kit.depth(dlq)).toBe(2);
    expect(await archiveRows(job.id)).toHaveLength(0);
    expect((await auditRows(job.id)).find((r) => r.action === "discard.run")).toMatchObject({
      outcome: "denied",
      actor_email: u.email,
    });
  });

  it("a DLQ whose reading may drop letters (quorum, delivery limit) is discarded only with the confirmation", async () => {
    const secrets: string[] = [];
    const { dlq } = await kit.dlqByReject(letters(2, secrets), { "x-queue-type": "quorum", "x-delivery-limit": 20 });
    await scan(dlq);
    const selection = { kind: "filter", filter: {} };
    const preview = await planDiscard(actors.admin, meta(), { connectionId: CONN, queue: dlq, selection });
    expect(preview.warnings.join(" ")).toMatch(/delivery limit of 20[\s\S]*move the letters to safety/);
    const refused = await startDiscard(actors.admin, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason: "no confirmation",
      confirmedCount: 2,
    });
    await worker().runOnce();
    const j = (await jobStore().get(refused.id))!;
    expect(j.state).toBe("failed");
    expect(j.error).toMatch(/Move the letters to safety/);
    expect(await archiveRows(refused.id)).toHaveLength(0);
    await kit.waitDepth(dlq, 2);
    const ok = await startDiscard(actors.admin, meta(), {
      connectionId: CONN,
      queue: dlq,
      selection,
      reason: "confirmed risky read",
      confirmedCount: 2,
      acceptRisk: true,
    });
    await worker().runOnce();
    expect((await jobStore().get(ok.id))?.state).toBe("succeeded");
    await kit.waitDepth(dlq, 0);
    expect(await archiveRows(ok.id)).toHaveLength(2);
  });

  it("refuses non-admins on every discard and undo action, and audits each refusal; viewers see no payload in exports", async () => {
    const { dlq, secrets } = await seeded(1);
    const job = await start(dlq, { kind: "filter", filter: {} });
    await worker().runOnce();
    const [row] = await archiveRows(job.id);
    const sel = { connectionId: CONN, queue: dlq, selection: { kind: "filter", filter: {} } };
    for (const role of ["viewer", "operator"] as const) {
      const a = actors[role];
      const m = meta();
      await expect(planDiscard(a, m, sel)).rejects.toMatchObject({ code: "forbidden:discard:run" });
      await expect(startDiscard(a, m, { ...sel, reason: "nope nope", confirmedCount: 1 })).rejects.toMatchObject({
        code: "forbidden:discard:run",
      });
      await expect(cancelDiscard(a, m, { jobId: job.id })).rejects.toMatchObject({ code: "forbidden:discard:run" });
      await expect(restoreArchived(a, m, { ids: [row.id], reason: "nope nope" })).rejects.toMatchObject({
        code: "forbidden:archive:restore",
      });
      const denied = await getDb().$queryRawUnsafe<Array<{ action: string }>>(
        `SELECT action FROM audit_log WHERE request_id = $1 AND outcome = 'denied' ORDER BY id`,
        m.requestId,
      );
      expect(denied.map((d) => d.action)).toEqual([
        "discard.plan",
        "discard.start",
        "discard.cancel",
        "archive.restore",
      ]);
    }
    const m = meta();
    await expect(
      exportArchive(actors.viewer, m, {
        filter: { connectionId: CONN, queue: dlq },
        format: "json",
        includePayload: true,
      }),
    ).rejects.toMatchObject({ code: "forbidden:letter:read-payload" });
    const exp = await exportArchive(actors.viewer, meta(), {
      filter: { connectionId: CONN, queue: dlq },
      format: "json",
    });
    const out: unknown[] = [];
    for await (const r of exp.rows) out.push(r);
    expect(out).toHaveLength(1);
    expect(JSON.stringify(out)).not.toContain(secrets[0]);
    // The viewer's view of the archived letter is masked by the default rules (the token field is not shown in clear).
    const view = await viewArchived(actors.viewer, meta(), { id: row.id });
    expect(view.messageId).toBe("m-0");
    expect(view.payload).not.toBeNull();
    expect(view.masking.payloadMasked).toBe(true);
    expect(view.payload && "text" in view.payload ? view.payload.text : "").toMatch(
      /"order": 0[\s\S]*"token": "\[hidden\]"/,
    );
    expect(JSON.stringify(view)).not.toContain(secrets[0]);
    expect(await kit.depth(dlq)).toBe(0);
  });
});
