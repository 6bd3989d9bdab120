import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigFinding } from "@/lib/brokers/contract/inspection";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { holdTaskLease, releaseTaskLease } from "@/lib/jobs/task-lease";
import { applyMigrations } from "@/scripts/lib/migrations";
import { createTestDatabase } from "@/scripts/lib/test-database";
import { reconcileFindings } from "./findings";
import { ownerMatcher } from "./owners";
import { overviewRows } from "./queries";
import { dlqSeries, pruneSamples, writeSamples } from "./samples";

/** The operations tables on both databases the console runs on: the embedded default and Postgres. */
function suite(name: string, open: () => Promise<{ db: PrismaClient; close: () => Promise<void> }>) {
  describe(name, () => {
    let db: PrismaClient;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await open());
    });
    afterAll(async () => close?.());
    const conn = () => `ops-${randomUUID().slice(0, 8)}`;

    it("gives a task lease to one replica at a time, renews it for the holder, and hands it over once it lapses or is released", async () => {
      const task = `task-${randomUUID().slice(0, 8)}`;
      const raced = await Promise.all([holdTaskLease(task, "a", 60_000, db), holdTaskLease(task, "b", 60_000, db)]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      const holder = raced[0] ? "a" : "b";
      const other = holder === "a" ? "b" : "a";
      expect(await holdTaskLease(task, holder, 60_000, db)).toBe(true);
      expect(await holdTaskLease(task, other, 60_000, db)).toBe(false);
      await holdTaskLease(task, holder, 1, db);
      await new Promise((r) => setTimeout(r, 20));
      expect(await holdTaskLease(task, other, 60_000, db)).toBe(true);
      await releaseTaskLease(task, other, db);
      expect(await holdTaskLease(task, holder, 60_000, db)).toBe(true);
    });

    it("downsamples on write: rounds in one minute fill one bucket per resolution; inflow adds up, depth is the last", async () => {
      const c = conn();
      const t0 = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 + 5_000);
      await writeSamples(
        t0,
        [{ connectionId: c, queue: "q", depth: 10, inflow: 4, oldestAt: null, deadlineAt: null }],
        db,
      );
      await writeSamples(
        new Date(t0.getTime() + 30_000),
        [{ connectionId: c, queue: "q", depth: 7, inflow: 3, oldestAt: null, deadlineAt: null }],
        db,
      );
      await writeSamples(
        new Date(t0.getTime() + 65_000),
        [{ connectionId: c, queue: "q", depth: 12, inflow: null, oldestAt: null, deadlineAt: null }],
        db,
      );
      const rows = await db.dlqSample.findMany({
        where: { connectionId: c },
        orderBy: [{ resolution: "asc" }, { bucketAt: "asc" }],
      });
      expect(rows.map((r) => [r.resolution, r.samples, r.depth, r.depthMax, r.inflow])).toEqual([
        [60, 2, 7, 10, 7],
        [60, 1, 12, 12, null],
        [900, 3, 12, 12, 7],
        [3600, 3, 12, 12, 7],
      ]);
      const hour = await dlqSeries(c, "q", "hour", new Date(t0.getTime() + 70_000), db);
      expect(hour.map((p) => [p.depth, p.inflowPerMin])).toEqual([
        [7, 7],
        [12, null],
      ]);
    });

    it("prunes each resolution after its own span and keeps the rest", async () => {
      const c = conn();
      const now = new Date();
      const ago = (ms: number) => new Date(now.getTime() - ms);
      await writeSamples(
        ago(3 * 3600_000),
        [{ connectionId: c, queue: "q", depth: 1, inflow: 0, oldestAt: null, deadlineAt: null }],
        db,
      );
      await writeSamples(
        ago(3 * 86400_000),
        [{ connectionId: c, queue: "q", depth: 2, inflow: 0, oldestAt: null, deadlineAt: null }],
        db,
      );
      await writeSamples(
        ago(20 * 86400_000),
        [{ connectionId: c, queue: "q", depth: 3, inflow: 0, oldestAt: null, deadlineAt: null }],
        db,
      );
      await pruneSamples(14, now, db);
      const left = await db.dlqSample.findMany({
        where: { connectionId: c },
        orderBy: [{ resolution: "asc" }, { bucketAt: "asc" }],
      });
      // 60 s buckets live 2 h, 900 s buckets 2 days, hour buckets 14 days.
      expect(left.map((r) => [r.resolution, r.depth])).toEqual([
        [900, 1],
        [3600, 2],
        [3600, 1],
      ]);
    });

    it("opens a finding once, refreshes it while it is seen, resolves it when the fault is gone, and keeps the history", async () => {
      const c = conn();
      const f: ConfigFinding = {
        code: "test.fault",
        severity: "warning",
        object: "queue <b>q</b>",
        dlq: "q",
        why: "why",
        fix: "fix",
      };
      const t = (m: number) => new Date(Date.UTC(2026, 11, 2, 10, m));
      expect(await reconcileFindings(c, [f, { ...f, severity: "critical" }], t(0), db)).toEqual({
        opened: 1,
        resolved: 0,
      });
      expect(await reconcileFindings(c, [{ ...f, why: "still" }], t(1), db)).toEqual({ opened: 0, resolved: 0 });
      let rows = await db.dlqFinding.findMany({ where: { connectionId: c } });
      expect(
        rows.map((r) => [r.severity, r.why, r.firstSeenAt.toISOString(), r.lastSeenAt.toISOString(), r.resolvedAt]),
      ).toEqual([["warning", "still", t(0).toISOString(), t(1).toISOString(), null]]);
      expect(await reconcileFindings(c, [], t(2), db)).toEqual({ opened: 0, resolved: 1 });
      expect(await reconcileFindings(c, [f], t(3), db)).toEqual({ opened: 1, resolved: 0 });
      rows = await db.dlqFinding.findMany({ where: { connectionId: c }, orderBy: { firstSeenAt: "asc" } });
      expect(rows.map((r) => [r.firstSeenAt.toISOString(), r.resolvedAt?.toISOString() ?? null])).toEqual([
        [t(0).toISOString(), t(2).toISOString()],
        [t(3).toISOString(), null],
      ]);
    });

    it("reads the overview in one query: status, open findings, the last hour's trend placed by minute, and the owner", async () => {
      const c = conn();
      const now = new Date();
      const minute = (ago: number) => Math.floor(now.getTime() / 60_000) * 60 - ago * 60;
      // The trend as a round keeps it: bucket starts and depths; an hour-old point falls off the chart.
      const trend = [
        { t: minute(70), d: 9 },
        { t: minute(2), d: 3 },
        { t: minute(0), d: 5 },
      ];
      await db.dlqStatus.create({
        data: {
          connectionId: c,
          queue: "orders.dlq",
          queueType: "classic",
          sampledAt: now,
          depth: 5,
          inflowPerMin: 1.5,
          trend,
        },
      });
      await reconcileFindings(
        c,
        [
          { code: "test.a", severity: "info", object: "a", dlq: "orders.dlq", why: "w", fix: "f" },
          { code: "test.b", severity: "critical", object: "b", dlq: "orders.dlq", why: "w", fix: "f" },
        ],
        now,
        db,
      );
      const rows = (
        await overviewRows(
          ownerMatcher([
            { connection: c, queue: "orders.*", team: "Payments", contact: "#payments", source: "config" },
          ]),
          now,
          db,
        )
      ).filter((r) => r.connectionId === c);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        depth: 5,
        inflowPerMin: 1.5,
        openFindings: 2,
        worstFinding: "critical",
        owner: { team: "Payments", contact: "#payments" },
      });
      expect(rows[0].trend).toHaveLength(60);
      expect(rows[0].trend.filter((d) => d !== null)).toEqual([3, 5]);
      expect(rows[0].trend.at(-1)).toBe(5);
      expect(rows[0].trend.at(-3)).toBe(3);
      // One DLQ's row (its page's header): the same figures, without reading the others.
      await db.dlqStatus.create({
        data: { connectionId: c, queue: "other.dlq", queueType: "classic", sampledAt: now, depth: 1 },
      });
      const one = await overviewRows(ownerMatcher([]), now, db, { connectionId: c, queue: "orders.dlq" });
      expect(one.map((r) => [r.queue, r.depth, r.openFindings])).toEqual([["orders.dlq", 5, 2]]);
    });
  });
}

let pg: Awaited<ReturnType<typeof createTestDatabase>> | undefined;

suite("operations storage on PostgreSQL", async () => {
  pg = await createTestDatabase("dlq_ops");
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

suite("operations storage on PGlite (the first command's default)", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-ops-pglite-"));
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
