import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { applyMigrations } from "@/scripts/lib/migrations";
import { createTestDatabase } from "@/scripts/lib/test-database";
import { JobStore } from "./store";
import { JobWorker } from "./worker";
import type { JobHandler } from "./types";

/** Each test uses its own kind so jobs of other tests never match a claim. */
const kindOf = () => `test-${randomUUID().slice(0, 8)}`;

function suite(name: string, open: () => Promise<{ db: PrismaClient; close: () => Promise<void> }>) {
  describe(name, () => {
    let db: PrismaClient;
    let close: () => Promise<void>;
    let store: JobStore;
    beforeAll(async () => {
      ({ db, close } = await open());
      store = new JobStore(() => db);
    });
    afterAll(async () => close?.());

    const dlq = () => ({ connectionId: "jobs-test", queue: `q-${randomUUID().slice(0, 8)}` });

    it("claims a queued job once (FOR UPDATE SKIP LOCKED) and leases it", async () => {
      const kind = kindOf();
      const job = await store.enqueue({ kind: kind as "scan", ...dlq() });
      const a = await store.claim("worker-a", [kind], 5000);
      const b = await store.claim("worker-b", [kind], 5000);
      expect(a?.id).toBe(job.id);
      expect(a?.state).toBe("running");
      expect(a?.leaseOwner).toBe("worker-a");
      expect(a!.leaseExpiresAt!.getTime()).toBeGreaterThan(Date.now());
      expect(b).toBeNull();
    });

    it("runs at most one job per DLQ: a second job waits until the first ends", async () => {
      const kind = kindOf();
      const d = dlq();
      const first = await store.enqueue({ kind: kind as "scan", ...d });
      const second = await store.enqueue({ kind: kind as "scan", ...d });
      const other = await store.enqueue({ kind: kind as "scan", ...dlq() });
      expect((await store.claim("w1", [kind], 5000))?.id).toBe(first.id);
      expect((await store.claim("w2", [kind], 5000))?.id).toBe(other.id); // another DLQ is free
      expect(await store.claim("w3", [kind], 5000)).toBeNull();
      // The index refuses a second holder even when the claim query is bypassed.
      await expect(
        db.$executeRawUnsafe(`UPDATE jobs SET state = 'running' WHERE id = $1::uuid`, second.id),
      ).rejects.toThrow();
      expect(await store.finish(first.id, "w1", { state: "succeeded" })).toBe(true);
      expect((await store.claim("w3", [kind], 5000))?.id).toBe(second.id);
    });

    it("a scoped claim takes only the named jobs, however old the others are (a test's worker ignores leftovers)", async () => {
      const kind = kindOf();
      const leftover = await store.enqueue({ kind: kind as "scan", ...dlq() });
      const stale = await store.enqueue({ kind: kind as "scan", ...dlq() });
      await store.claim("dead", [kind], 5000, { jobIds: [stale.id] });
      await db.$executeRawUnsafe(
        `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
        stale.id,
      );
      const mine = await store.enqueue({ kind: kind as "scan", ...dlq() });
      expect(await store.claim("w", [kind], 5000, { jobIds: [] })).toBeNull();
      expect(await store.claim("w", [kind], 5000, { jobIds: ["not-a-uuid"] })).toBeNull();
      const seen: string[] = [];
      const worker = new JobWorker({
        handlers: {
          [kind]: async (ctx) => {
            seen.push(ctx.job.id);
            return { state: "succeeded" };
          },
        },
        store,
        owner: "scoped",
        scope: { jobIds: [mine.id] },
      });
      expect((await worker.runOnce())?.id).toBe(mine.id);
      expect(await worker.runOnce()).toBeNull(); // the older queued job and the expired lease are not its business
      expect(seen).toEqual([mine.id]);
      expect((await store.get(leftover.id))?.state).toBe("queued");
      expect((await store.get(stale.id))?.leaseOwner).toBe("dead");
      // Unscoped, the oldest runnable job is taken as before.
      expect((await store.claim("any", [kind], 5000))?.id).toBe(leftover.id);
    });

    it("reclaims a job whose lease expired (its process died) and resumes from its checkpoint", async () => {
      const kind = kindOf();
      const job = await store.enqueue({ kind: kind as "scan", ...dlq() });
      await store.claim("dead-worker", [kind], 5000);
      await store.heartbeat(job.id, "dead-worker", 5000, { checkpoint: { at: 7 }, progress: { read: 7 } });
      expect(await store.claim("live-worker", [kind], 5000)).toBeNull(); // lease still valid
      await db.$executeRawUnsafe(
        `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1::uuid`,
        job.id,
      );
      const seen: unknown[] = [];
      const handler: JobHandler = async (ctx) => {
        seen.push(ctx.job.checkpoint);
        await ctx.checkpoint({ checkpoint: { at: 10 } });
        return { state: "succeeded", progress: { read: 10 } };
      };
      const worker = new JobWorker({ handlers: { [kind]: handler }, store, owner: "live-worker", leaseMs: 5000 });
      expect((await worker.runOnce())?.id).toBe(job.id);
      expect(seen).toEqual([{ at: 7 }]);
      const done = (await store.get(job.id))!;
      expect(done.state).toBe("succeeded");
      expect(done.attempts).toBe(2);
      expect(done.leaseOwner).toBeNull();
      expect(done.checkpoint).toEqual({ at: 10 });
      // The dead worker, back from the grave, can no longer write.
      await expect(store.heartbeat(job.id, "dead-worker", 5000)).rejects.toThrow(/lease/);
      expect(await store.finish(job.id, "dead-worker", { state: "failed" })).toBe(false);
    });

    it("cancels: queued at once, running at the handler's next checkpoint", async () => {
      const kind = kindOf();
      const queued = await store.enqueue({ kind: kind as "scan", ...dlq() });
      expect(await store.requestCancel(queued.id)).toBe("cancelled");
      expect(await store.claim("w", [kind], 5000)).toBeNull();

      const running = await store.enqueue({ kind: kind as "scan", ...dlq() });
      let batches = 0;
      const handler: JobHandler = async (ctx) => {
        for (;;) {
          batches++;
          if (batches === 2) await store.requestCancel(ctx.job.id);
          const r = await ctx.checkpoint({ progress: { read: batches } });
          if (r.cancelRequested) return { state: "cancelled" };
        }
      };
      const worker = new JobWorker({ handlers: { [kind]: handler }, store, owner: "w", leaseMs: 5000 });
      await worker.runOnce();
      const j = (await store.get(running.id))!;
      expect(j.state).toBe("cancelled");
      expect(batches).toBe(2);
    });

    it("records a failure in operator words and frees the DLQ", async () => {
      const kind = kindOf();
      const d = dlq();
      const job = await store.enqueue({ kind: kind as "scan", ...d });
      const { AppError } = await import("@/lib/errors");
      const worker = new JobWorker({
        handlers: {
          [kind]: async () => {
            throw new AppError("unavailable:broker", { userMessage: "The broker is down." });
          },
        },
        store,
        owner: "w",
      });
      await worker.runOnce();
      const j = (await store.get(job.id))!;
      expect(j.state).toBe("failed");
      expect(j.error).toBe("The broker is down.");
      const next = await store.enqueue({ kind: kind as "scan", ...d });
      expect((await store.claim("w", [kind], 5000))?.id).toBe(next.id);
    });

    it("a started worker polls, runs and gives the lease back on stop", async () => {
      const kind = kindOf();
      const job = await store.enqueue({ kind: kind as "scan", ...dlq() });
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const handler: JobHandler = async (ctx) => {
        started();
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
        throw new Error("stopped");
      };
      const worker = new JobWorker({
        handlers: { [kind]: handler },
        store,
        owner: "poller",
        pollMs: 50,
        leaseMs: 60_000,
      });
      worker.start();
      await running;
      await worker.stop();
      const j = (await store.get(job.id))!;
      expect(j.state).toBe("running"); // not failed: resumable
      expect(j.leaseOwner).toBeNull();
      expect((await store.claim("next", [kind], 5000))?.id).toBe(job.id); // at once, no lease wait
    });
  });
}

let pg: { url: string; drop: () => Promise<void> } | null = null;
suite("jobs on PostgreSQL", async () => {
  pg = await createTestDatabase("dlq_jobs");
  await applyMigrations({ databaseUrl: pg.url });
  const db = new PrismaClient({ adapter: new PrismaPg({ connectionString: pg.url }) });
  return {
    db,
    close: async () => {
      await db.$disconnect();
      await pg?.drop();
    },
  };
});

suite("jobs on PGlite (one connection)", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-jobs-pglite-"));
  const dataDir = path.join(dir, "db");
  await applyMigrations({ dataDir });
  const pglite = new PGlite(dataDir);
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    db,
    close: async () => {
      await db.$disconnect();
      await pglite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
