import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "@/lib/auth/users";
import type { Actor } from "@/lib/auth/session";
import { RabbitKit } from "@/lib/brokers/rabbitmq/test-kit";
import { getDb } from "@/lib/db";
import { discardHandler } from "@/lib/discard/handler";
import { planDiscard, startDiscard } from "@/lib/discard/use-cases";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanDlq } from "@/test/integration-kit";
import { restoreArchived } from "@/lib/discard/undo";

/**
 * Undo on the real RabbitMQ and Postgres when re-publishing fails: the attempt is on record
 * (`archive.restore_started`) before the broker is asked, so a process that dies between the two
 * still leaves it in the audit log; the letters stay in the archive and a later undo puts each back once.
 */
const CONN = "local-rabbitmq";
const enc = (s: string) => new TextEncoder().encode(s);
const meta = () => ({ requestId: `ua-${randomUUID()}`, ip: "127.0.0.1" });
const kit = new RabbitKit();
let admin: Actor;

beforeAll(async () => {
  const u = await createUser({
    email: `admin-${randomUUID().slice(0, 8)}@undo-attempt.test`,
    role: "admin",
    password: "a-long-enough-password",
  });
  admin = { id: u.id, email: u.email, name: null, role: "admin" };
});
afterAll(async () => {
  await kit.cleanup();
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters();
});

async function discarded(n: number): Promise<{ dlq: string; archiveIds: string[] }> {
  const { dlq } = await kit.dlqByReject(
    Array.from({ length: n }, (_, i) => ({ body: enc(`{"order":${i}}`), messageId: `m-${i}` })),
  );
  await scanDlq(CONN, dlq);
  const selection = { kind: "filter", filter: {} };
  const preview = await planDiscard(admin, meta(), { connectionId: CONN, queue: dlq, selection });
  const job = await startDiscard(admin, meta(), {
    connectionId: CONN,
    queue: dlq,
    selection,
    reason: "Invalid forever",
    confirmedCount: preview.count,
  });
  await new JobWorker({
    handlers: { discard: discardHandler() },
    owner: `ua-${randomUUID().slice(0, 6)}`,
    leaseMs: 10_000,
    scope: { jobIds: [job.id] },
  }).runOnce();
  expect((await jobStore().get(job.id))?.state).toBe("succeeded");
  await kit.waitDepth(dlq, 0);
  const rows = await getDb().archivedLetter.findMany({ where: { discardJobId: job.id }, select: { id: true } });
  return { dlq, archiveIds: rows.map((r) => r.id) };
}

describe("undo when re-publishing fails", () => {
  it("records the attempt before re-publishing; the letters stay in the archive, nothing is published, and the next undo puts each back once", async () => {
    const { dlq, archiveIds } = await discarded(3);
    expect(archiveIds).toHaveLength(3);
    // The DLQ is gone: the broker refuses the re-publish.
    await (await kit.channel()).deleteQueue(dlq);

    const failed = await restoreArchived(admin, meta(), { ids: archiveIds, reason: "Put back after the fix" });
    expect(failed).toMatchObject({ restored: 0, failed: 3 });
    const rows = await getDb().auditEvent.findMany({
      where: { operationId: failed.operationId },
      orderBy: { id: "asc" },
    });
    expect(rows[0]).toMatchObject({
      action: "archive.restore_started",
      outcome: "success",
      actorId: admin.id,
      connectionId: CONN,
      queue: dlq,
    });
    expect(rows[0].details).toMatchObject({ claimed: 3, requested: 3, reason: "Put back after the fix" });
    expect([...(rows[0].details as { archiveIds: string[] }).archiveIds].sort()).toEqual([...archiveIds].sort());
    expect(rows.slice(1).map((r) => [r.action, r.outcome])).toEqual([
      ["archive.restore", "failure"],
      ...archiveIds.map(() => ["letter.restore", "failure"]),
    ]);
    const archived = await getDb().archivedLetter.findMany({
      where: { id: { in: archiveIds } },
      select: { restoreState: true },
    });
    expect(archived.map((a) => a.restoreState)).toEqual(["failed", "failed", "failed"]);

    // The DLQ is back: the undo is tried again and each letter arrives once.
    await kit.queue(dlq);
    const again = await restoreArchived(admin, meta(), { ids: archiveIds, reason: "Put back after the fix" });
    expect(again).toMatchObject({ restored: 3, failed: 0 });
    expect(await kit.depth(dlq)).toBe(3);
    expect(
      (await getDb().auditEvent.findMany({ where: { operationId: again.operationId }, orderBy: { id: "asc" } }))[0]
        .action,
    ).toBe("archive.restore_started");
  });
});
