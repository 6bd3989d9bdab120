import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { RabbitMqAdapter } from "@/lib/brokers/rabbitmq/adapter";
import { RabbitKit, testConfig } from "@/lib/brokers/rabbitmq/test-kit";
import { sha256Hex } from "@/lib/brokers/display";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";
import { getDb } from "@/lib/db";
import { jobStore } from "@/lib/jobs/store";
import { JobWorker } from "@/lib/jobs/worker";
import { scanHandler } from "./scan";

/**
 * The scan's memory is bounded in bytes, not only in letters: a DLQ of big letters is written in
 * batches cut by their size (here a few letters each, far below the 500-letter count), and every
 * letter still reaches the index once.
 */
describe("a scan of big letters", () => {
  const kit = new RabbitKit();
  const adapter = new RabbitMqAdapter(testConfig({ id: `tri-bytes-${randomUUID().slice(0, 6)}` }), {
    allManagedHeaders: MANAGED_HEADERS,
    idleMs: 500,
  });
  afterAll(async () => {
    await adapter.close().catch(() => undefined);
    await kit.cleanup().catch(() => undefined);
  });

  it("cuts its batches by bytes, and indexes every letter", { timeout: 60_000 }, async () => {
    const LETTERS = 20;
    const SIZE = 200 * 1024;
    const bodies = Array.from({ length: LETTERS }, (_, i) => Buffer.alloc(SIZE, `letter ${i} `));
    const { dlq } = await kit.dlqByReject(
      bodies.map((body, i) => ({
        body,
        messageId: `big-${i}`,
        headers: { "x-exception-class": "com.acme.TooBigException", "x-exception-message": `letter ${i}` },
      })),
    );
    const kind = `scan-bytes-${randomUUID().slice(0, 8)}`;
    const job = await jobStore().enqueue({ kind: kind as "scan", connectionId: adapter.connectionId, queue: dlq });
    // 512 KiB a batch: three 200 KiB letters reach it, so no batch holds more than three.
    const base = scanHandler({ adapterFor: () => adapter, batchSize: 500, batchBytes: 512 * 1024, writers: 2 });
    const written: number[] = [];
    const worker = new JobWorker({
      handlers: {
        [kind]: (ctx) =>
          base({
            ...ctx,
            checkpoint: (u) => {
              const w = (u.progress as { written?: number } | undefined)?.written;
              if (w !== undefined) written.push(w);
              return ctx.checkpoint(u);
            },
          }),
      },
      owner: `test-${kind}`,
      leaseMs: 10_000,
    });
    expect((await worker.runOnce())?.id).toBe(job.id);
    const done = (await jobStore().get(job.id))!;
    expect(done.state).toBe("succeeded");
    expect(done.progress).toMatchObject({ read: LETTERS, written: LETTERS, total: LETTERS, gone: 0 });

    // One checkpoint per batch written (in flight they finish in any order): every batch 1-3 letters.
    const batches = written.filter((w) => w > 0).length;
    expect(Math.max(...written)).toBe(LETTERS);
    expect(batches).toBeGreaterThanOrEqual(Math.ceil(LETTERS / 3));
    const steps = [...new Set(written)].sort((a, b) => a - b).map((w, i, all) => w - (all[i - 1] ?? 0));
    expect(steps.every((s) => s >= 0 && s <= 3)).toBe(true);

    // Nothing lost: each letter once, with its whole payload's digest.
    const rows = await getDb().$queryRawUnsafe<Array<{ message_id: string; sha256: string; body_size: number }>>(
      `SELECT message_id, sha256, body_size FROM triage_letters WHERE connection_id = $1 AND queue = $2 ORDER BY position`,
      adapter.connectionId,
      dlq,
    );
    expect(rows.map((r) => r.message_id)).toEqual(bodies.map((_, i) => `big-${i}`));
    expect(rows.map((r) => r.sha256)).toEqual(bodies.map((b) => sha256Hex(b)));
    expect(rows.every((r) => r.body_size === SIZE)).toBe(true);
  });
});
