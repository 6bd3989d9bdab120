import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeArchive } from "@/lib/archive/store";
import { restoreArchived } from "@/lib/discard/undo";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { AMQP_URL, RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanDlq } from "@/test/integration-kit";
import { proxiedRabbitAdapter } from "@/test/proxied-rabbitmq";
import { discardHandler, type DiscardDeps } from "./handler";
import { sweepDiscardLeftovers } from "./leftovers";
import { planDiscard, startDiscard } from "./use-cases";

/**
 * A discard whose broker connection breaks right after its acks went out, on the real RabbitMQ
 * without stopping it: the discard's adapter reaches RabbitMQ through a proxy that, in the middle
 * of a batch, holds what the console sends (the acks of the rest of the batch never arrive) and then
 * cuts every connection. RabbitMQ puts those letters back in the DLQ although the console recorded
 * them discarded and archived them. Conservation: every letter ends once, in the DLQ or in the
 * archive, never both, and an undo puts each back once.
 */
const CONN = "local-rabbitmq";
const N = 30;
/** The letter (1-based, over the job) after whose archive row the proxy holds the console's frames: in the second batch of 10. */
const HOLD_AT = 15;
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `la-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new RabbitKit();
const rig = proxiedRabbitAdapter(CONN);
const proxy = rig.proxy;
let admin: Actor;

beforeAll(async () => {
  const u = await createUser({
    email: `admin-${randomUUID().slice(0, 8)}@lost-acks.test`,
    role: "admin",
    password: "a-long-enough-password",
  });
  admin = { id: u.id, email: u.email, name: null, role: "admin" };
  await rig.start();
});
afterAll(async () => {
  await rig.stop();
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function seeded(): Promise<string> {
  const { dlq } = await kit.dlqByReject(
    Array.from({ length: N }, (_, i) => ({
      body: enc(JSON.stringify({ order: i })),
      messageId: `m-${i}`,
      headers: { "x-exception-class": "com.acme.InvalidOrder" },
    })),
  );
  await scanDlq(CONN, dlq);
  return dlq;
}

async function discard(dlq: string, deps: Partial<DiscardDeps> = {}) {
  const selection = { kind: "filter", filter: {} };
  const preview = await planDiscard(admin, meta(), { connectionId: CONN, queue: dlq, selection });
  const job = await startDiscard(admin, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    reason: "Orders for a retired product line",
    confirmedCount: preview.count,
  });
  await new JobWorker({
    handlers: { discard: discardHandler({ adapterFor: () => rig.adapter, batchSize: 10, ...deps }) },
    owner: `la-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    scope: { jobIds: [job.id] },
  }).runOnce();
  return { job: (await jobStore().get(job.id))!, count: preview.count };
}

/**
 * Discards the DLQ's N letters through the proxy; at letter HOLD_AT the proxy starts holding what
 * the console sends (that letter's ack and the rest of its batch's never reach the broker), and
 * cuts every connection shortly after, while the move waits for the broker to answer.
 */
async function discardLosingAcks(dlq: string) {
  let archived = 0;
  const r = await discard(dlq, {
    archive: async (db, ctx, copy) => {
      const id = await writeArchive(db, ctx, copy);
      if (++archived === HOLD_AT) {
        proxy.holdRequests();
        setTimeout(() => void proxy.cut(), 500);
      }
      return id;
    },
  });
  await proxy.restore();
  return r.job;
}

/** Every letter in a queue (consume without ack, then close), by message id. */
async function inQueue(queue: string): Promise<string[]> {
  const conn = await amqp.connect(AMQP_URL);
  const ch = await conn.createChannel();
  const depth = (await ch.checkQueue(queue)).messageCount;
  const out: string[] = [];
  await new Promise<void>((resolve) => {
    if (depth === 0) return resolve();
    void ch.consume(queue, (m) => {
      if (m) out.push(String(m.properties.messageId));
      if (out.length === depth) resolve();
    });
  });
  await ch.close();
  await conn.close();
  return out;
}

const discardedIn = async (jobIds: string[]) =>
  (
    await getDb().$queryRawUnsafe<Array<{ message_id: string }>>(
      `SELECT message_id FROM discard_letters WHERE job_id = ANY($1::uuid[]) AND state = 'discarded'`,
      jobIds,
    )
  ).map((r) => r.message_id);
const archiveOf = (dlq: string) =>
  getDb().$queryRawUnsafe<Array<{ id: string; message_id: string }>>(
    `SELECT id::text AS id, message_id FROM archived_letters WHERE connection_id = $1 AND queue = $2`,
    CONN,
    dlq,
  );
const leftoverAudit = (jobId: string) =>
  getDb().auditEvent.findMany({ where: { operationId: jobId, action: "discard.leftovers_removed" } });
const all = Array.from({ length: N }, (_, i) => `m-${i}`).sort();
const sorted = (xs: string[]) => [...xs].sort();

describe("discard on RabbitMQ when the connection breaks right after the acks", () => {
  it("the letters whose acks were lost are flagged; the next discard of the DLQ removes those copies first (audited); every letter ends once; an undo puts each back once", async () => {
    const dlq = await seeded();
    const first = await discardLosingAcks(dlq);
    expect(first.state).toBe("failed");
    expect(first.error).toMatch(
      /still in the DLQ; start a new discard for them when the broker is back\. \d+ letter\(s\) discarded just before the connection broke may be back in the DLQ/,
    );
    // The job's failure is on record for the admin who started it, with the reason the job page shows.
    const ended = await getDb().auditEvent.findMany({ where: { operationId: first.id, action: "discard.finished" } });
    expect(ended.map((e) => [e.outcome, e.actorId, (e.details as { error: string }).error])).toEqual([
      ["failure", admin.id, first.error],
    ]);

    const recorded = await discardedIn([first.id]);
    const back = await inQueue(dlq);
    const both = recorded.filter((m) => back.includes(m));
    console.log(`[lost-acks] discarded ${recorded.length}, back in the DLQ though recorded discarded: ${both.length}`);
    expect(both).toContain(`m-${HOLD_AT - 1}`); // its ack never reached the broker
    const flagged = await getDb().discardLetter.findMany({
      where: { jobId: first.id, leftoverCheck: true },
      select: { messageId: true },
    });
    for (const m of both) expect(flagged.map((f) => f.messageId)).toContain(m);

    // The admin discards what is left (the selection no longer holds what the first one discarded).
    const second = await discard(dlq);
    expect(second.count).toBe(N - recorded.length);
    expect(second.job.state).toBe("succeeded");
    expect(await inQueue(dlq)).toEqual([]);
    const removal = await leftoverAudit(first.id);
    expect(removal).toHaveLength(1);
    expect(removal[0]).toMatchObject({ outcome: "success", actorId: admin.id });
    expect(removal[0].details).toMatchObject({
      removed: both.length,
      checked: flagged.length,
      by: `discard ${second.job.id}`,
    });
    expect(await getDb().discardLetter.count({ where: { jobId: first.id, leftoverCheck: true } })).toBe(0);

    // Every letter once: recorded discarded by exactly one of the two jobs, one archive row each.
    expect(sorted(await discardedIn([first.id, second.job.id]))).toEqual(all);
    const archive = await archiveOf(dlq);
    expect(sorted(archive.map((a) => a.message_id))).toEqual(all);

    const undo = await restoreArchived(admin, meta(), {
      ids: archive.map((a) => a.id),
      reason: "Put back after the lost-acks test",
    });
    expect(undo).toMatchObject({ restored: N, failed: 0 });
    expect(sorted(await inQueue(dlq))).toEqual(all);
  }, 90_000);

  it("an undo of the broken discard removes the DLQ copies of its flagged letters before re-publishing (audited): each letter in the DLQ once", async () => {
    const dlq = await seeded();
    const first = await discardLosingAcks(dlq);
    expect(first.state).toBe("failed");
    const recorded = await discardedIn([first.id]);
    const back = await inQueue(dlq);
    const both = recorded.filter((m) => back.includes(m));
    expect(both.length).toBeGreaterThan(0);

    const archive = await archiveOf(dlq);
    expect(sorted(archive.map((a) => a.message_id))).toEqual(sorted(recorded));
    const undo = await restoreArchived(admin, meta(), {
      ids: archive.map((a) => a.id),
      reason: "Put back the broken discard",
    });
    expect(undo).toMatchObject({ restored: recorded.length, failed: 0 });
    expect(sorted(await inQueue(dlq))).toEqual(all);
    const removal = await leftoverAudit(first.id);
    expect(removal).toHaveLength(1);
    expect(removal[0].details).toMatchObject({ removed: both.length, by: `undo ${undo.operationId}` });
  }, 90_000);

  it("a connection cut between a letter's archive write and its removal: the letter is recorded discarded and flagged, so it ends once, in the archive", async () => {
    const dlq = await seeded();
    let archived = 0;
    const { job } = await discard(dlq, {
      archive: async (db, ctx, copy) => {
        const id = await writeArchive(db, ctx, copy);
        // The archive row is committed; the connection goes before the adapter can remove the letter.
        if (++archived === HOLD_AT) await proxy.cut();
        return id;
      },
    });
    await proxy.restore();
    expect(job.state).toBe("failed");
    const recorded = await discardedIn([job.id]);
    const archive = await archiveOf(dlq);
    // Every archive copy belongs to a letter on record as discarded: none is a stray an undo would duplicate.
    expect(sorted(archive.map((a) => a.message_id))).toEqual(sorted(recorded));
    expect(recorded).toContain(`m-${HOLD_AT - 1}`);
    const flagged = await getDb().discardLetter.findMany({
      where: { jobId: job.id, leftoverCheck: true },
      select: { messageId: true },
    });
    expect(flagged.map((f) => f.messageId)).toContain(`m-${HOLD_AT - 1}`);

    await sweepDiscardLeftovers(getDb(), () => rig.adapter);
    const left = await inQueue(dlq);
    expect(left.filter((m) => recorded.includes(m))).toEqual([]);
    expect(sorted([...left, ...recorded])).toEqual(all);
  }, 90_000);

  it("with nothing else touching the DLQ, the worker's leftover sweep removes the copies once the broker answers (audited): each letter ends once", async () => {
    const dlq = await seeded();
    const first = await discardLosingAcks(dlq);
    expect(first.state).toBe("failed");
    const recorded = await discardedIn([first.id]);
    const back = await inQueue(dlq);
    const both = recorded.filter((m) => back.includes(m));
    expect(both.length).toBeGreaterThan(0);

    const swept = await sweepDiscardLeftovers(getDb(), () => rig.adapter);
    expect(swept.removed).toBe(both.length);
    const left = await inQueue(dlq);
    // Each letter is either still in the DLQ or discarded (and archived), never both.
    expect(left.filter((m) => recorded.includes(m))).toEqual([]);
    expect(sorted([...left, ...recorded])).toEqual(all);
    expect(await getDb().discardLetter.count({ where: { jobId: first.id, leftoverCheck: true } })).toBe(0);
    const removal = await leftoverAudit(first.id);
    expect(removal).toHaveLength(1);
    expect(removal[0].details).toMatchObject({ removed: both.length, by: "leftover sweep" });
    // A second round finds nothing to do.
    expect(await sweepDiscardLeftovers(getDb(), () => rig.adapter)).toMatchObject({ removed: 0 });
  }, 90_000);
});
