import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { maskingPolicy } from "@/lib/masking/policy";
import { holdTaskLease } from "@/lib/jobs/task-lease";
import { JobWorker } from "@/lib/jobs/worker";
import {
  COUNTED_HEADERS_MAX,
  fillHeader,
  headerCountState,
  headerCountsTask,
  queryHeaderGroupsKept,
  requestHeaderCount,
} from "./header-stats";
import type { IndexRow } from "./index-row";
import { markGone, upsertLetters } from "./index-store";
import { type GroupByKey, queryGroupsBy, queryGroupsByRows } from "./queries";
import { indexRow } from "./test-kit";
import { listGroups, listLetters, maskValueGroups } from "./use-cases";

/**
 * Grouping by a header from kept counts (migration *_triage_header_stats): once a header is counted
 * for a DLQ, its groups (count, first and last arrival of each value and of the letters without
 * it) must equal the grouping of the letters' rows after every kind of write; before, the rows are
 * read, and the counts are never shown half filled.
 */
const CONN = "header-stats-conn";
const db = getDb();
afterAll(async () => {
  await db.$executeRawUnsafe(`DELETE FROM triage_letters WHERE connection_id = $1`, CONN);
  await db.$executeRawUnsafe(`DELETE FROM triage_group_stats WHERE connection_id = $1`, CONN);
  await db.$executeRawUnsafe(`DELETE FROM triage_header_stats WHERE connection_id = $1`, CONN);
  await db.$executeRawUnsafe(`DELETE FROM triage_counted_headers WHERE connection_id = $1`, CONN);
});

const HOUR = 3600_000;
const T0 = Date.parse("2026-03-01T08:00:00.000Z");
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

/** Letters over twelve hours (with milliseconds), x-tenant from 7 values or absent. */
function letter(i: number, over: Partial<IndexRow> = {}): IndexRow {
  const headers: Record<string, string> =
    i % 10 === 0 ? { "x-other": "o" } : { "x-tenant": `t${i % 7}`, authorization: `Bearer secret-${i % 3}` };
  return indexRow(i, {
    dead_lettered_at: new Date(T0 + ((i * 7_919_003) % (12 * HOUR)) + (i % 997)).toISOString(),
    group_key: `g${i % 3}`,
    headers,
    ...over,
  });
}

/** Writes letters from..to-1 of `letter` as one scan's batch. */
const write = (queue: string, scan: string, from: number, to: number) =>
  upsertLetters(
    CONN,
    queue,
    scan,
    range(from, to).map((i) => letter(i)),
    db,
  );

/** Asks for a header to be counted and counts it, as the worker does. */
async function countNow(queue: string, name: string) {
  await requestHeaderCount(CONN, queue, name, db);
  return (await fillHeader(CONN, queue, name, db)).state;
}

const stateOf = (queue: string, name: string) => headerCountState(CONN, queue, name, db);

/** The kept rows against a direct aggregate: counts equal, bounds around the present letters. */
async function expectStatsExact(queue: string, name: string) {
  const bad = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
    `WITH a AS (
       SELECT headers->>$3 AS v, (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint AS hour,
         count(*)::int AS n, min(arrived_at) AS lo, max(arrived_at) AS hi
       FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL GROUP BY 1, 2
     ),
     direct AS (
       SELECT 'v' AS kind, v AS value, hour, n, lo, hi FROM a WHERE v IS NOT NULL
       UNION ALL SELECT 't', v, 0, sum(n)::int, NULL, NULL FROM a WHERE v IS NOT NULL GROUP BY v
       UNION ALL SELECT 'n', '', hour, n, lo, hi FROM a WHERE v IS NULL
     ),
     kept AS (SELECT kind, value, hour, n, first_at, last_at FROM triage_header_stats
       WHERE connection_id = $1 AND queue = $2 AND name = $3 AND n <> 0)
     SELECT * FROM direct d FULL JOIN kept k USING (kind, value, hour)
     WHERE d.n IS DISTINCT FROM k.n OR k.first_at > d.lo OR k.last_at < d.hi`,
    CONN,
    queue,
    name,
  );
  expect(bad).toEqual([]);
}

async function expectKeptEqualsRows(queue: string, name: string) {
  expect(await headerCountState(CONN, queue, name, db)).toBe("counted");
  await expectStatsExact(queue, name);
  const by = `header:${name}` as GroupByKey;
  const rows = await queryGroupsByRows(CONN, queue, by, db);
  expect(rows.groups.length).toBeGreaterThan(0);
  // The kept counts answer (not the rows read again because a probe found nothing).
  const kept = await queryHeaderGroupsKept(CONN, queue, name, db);
  expect(
    kept?.map((r) => ({
      value: r.value ?? null,
      count: Number(r.n),
      firstAt: new Date(r.first_at as Date).toISOString(),
      lastAt: new Date(r.last_at as Date).toISOString(),
    })),
  ).toEqual(rows.groups.map(({ value, count, firstAt, lastAt }) => ({ value, count, firstAt, lastAt })));
  expect(await queryGroupsBy(CONN, queue, by, db)).toEqual(rows);
}

/** A worker that runs only the header-counting round, every 100 ms, as lib/worker.ts composes it. */
function headerWorker(owner: string) {
  return new JobWorker({
    handlers: {},
    owner,
    scope: { jobIds: [] },
    maintenance: [headerCountsTask({ everyMs: 100, log: () => undefined })],
  });
}

async function until(check: () => Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("grouping by a counted header", () => {
  it("equals the rows' grouping after letters arrive, leave, return, change, are deleted and rescanned", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan1 = randomUUID();
    await write(queue, scan1, 0, 200);
    expect(await countNow(queue, "x-tenant")).toBe("counted");
    await expectKeptEqualsRows(queue, "x-tenant");
    // New letters (written after the backfill: counted by the triggers).
    await write(queue, scan1, 200, 320);
    await expectKeptEqualsRows(queue, "x-tenant");
    // A rescan that no longer sees a third of them (the earliest of some values among them).
    const scan2 = randomUUID();
    const seen = range(0, 320).filter((i) => i % 3 !== 0);
    await upsertLetters(
      CONN,
      queue,
      scan2,
      seen.map((i) => letter(i)),
      db,
    );
    expect(await markGone(CONN, queue, scan2, db)).toBe(320 - seen.length);
    await expectKeptEqualsRows(queue, "x-tenant");
    // Some return, some with another value or header set, or an arrival moved within its hour or to another.
    const scan3 = randomUUID();
    await upsertLetters(
      CONN,
      queue,
      scan3,
      range(0, 320)
        .filter((i) => i % 2 === 0)
        .map((i) =>
          i % 8 === 0
            ? letter(i, { headers: { "x-tenant": `moved-${i % 2}` } })
            : i % 8 === 2
              ? letter(i, { dead_lettered_at: new Date(T0 + ((i * 7_919_003) % (12 * HOUR)) - 1).toISOString() })
              : i % 8 === 4
                ? letter(i, { dead_lettered_at: new Date(T0 - 5 * HOUR + i).toISOString() })
                : letter(i),
        ),
      db,
    );
    await expectKeptEqualsRows(queue, "x-tenant");
    // Direct writes: a value renamed in SQL, letters deleted, every letter of a value gone.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET headers = headers || '{"x-tenant": "renamed"}' WHERE connection_id = $1 AND queue = $2 AND headers->>'x-tenant' = 't3'`,
      CONN,
      queue,
    );
    // A value that is not a string (->> reads it as text, as the rows' grouping does).
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET headers = headers || '{"x-tenant": 42}' WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-11', 'l-13', 'l-17')`,
      CONN,
      queue,
    );
    await db.$executeRawUnsafe(
      `DELETE FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-1', 'l-2', 'l-5', 'l-40')`,
      CONN,
      queue,
    );
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND headers->>'x-tenant' = 't4'`,
      CONN,
      queue,
    );
    await expectKeptEqualsRows(queue, "x-tenant");
    // The same rescan twice: nothing changes.
    await upsertLetters(
      CONN,
      queue,
      scan3,
      seen.map((i) => letter(i)),
      db,
    );
    await upsertLetters(
      CONN,
      queue,
      scan3,
      seen.map((i) => letter(i)),
      db,
    );
    await expectKeptEqualsRows(queue, "x-tenant");
    // Every letter gone: no groups either way.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2`,
      CONN,
      queue,
    );
    expect(await queryGroupsBy(CONN, queue, "header:x-tenant", db)).toEqual({ total: 0, groups: [] });
  });

  it("reads the rows until a header is counted, and counts nothing for a name not counted", async () => {
    const queue = `dlq-${randomUUID()}`;
    await write(queue, randomUUID(), 0, 150);
    expect(await stateOf(queue, "x-tenant")).toBeNull();
    const rows = await queryGroupsByRows(CONN, queue, "header:x-tenant", db);
    expect(await queryGroupsBy(CONN, queue, "header:x-tenant", db)).toEqual(rows);
    const kept = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM triage_header_stats WHERE connection_id = $1 AND queue = $2`,
      CONN,
      queue,
    );
    expect(kept[0].n).toBe(0);
    // Stale counts a dropped name left (as a writer racing the drop could) are not added to.
    await db.$executeRawUnsafe(
      `INSERT INTO triage_header_stats (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
       VALUES ($1, $2, 'x-tenant', 't', 't1', 0, 1000, now(), now())`,
      CONN,
      queue,
    );
    // Asked for: the rows answer, and say the counting is under way; letters written meanwhile are not counted.
    expect(await queryGroupsBy(CONN, queue, "header:x-tenant", db, { mayCount: true, withCounting: true })).toEqual({
      ...rows,
      counting: true,
    });
    expect(await stateOf(queue, "x-tenant")).toBe("wanted");
    expect((await fillHeader(CONN, queue, "x-tenant", db)).state).toBe("counted");
    await expectKeptEqualsRows(queue, "x-tenant");
  });

  it("counts exactly when letters are written while it counts, and waits for a write begun before", async () => {
    for (let run = 0; run < 3; run++) {
      const queue = `dlq-${randomUUID()}`;
      const scan = randomUUID();
      await write(queue, scan, 0, 400);
      await requestHeaderCount(CONN, queue, "x-tenant", db);
      // A transaction whose write ran before the name was visible to the triggers (so it added no
      // counts), committed only after the worker started counting: its letters must be counted once.
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let written = () => {};
      const wrote = new Promise<void>((r) => {
        written = r;
      });
      const early = db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(
          `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-3', 'l-4', 'l-5')`,
          CONN,
          queue,
        );
        written();
        await held;
      });
      await wrote;
      const writes = (async () => {
        for (let b = 0; b < 12; b++) {
          await write(queue, scan, 400 + b * 50, 450 + b * 50);
          await db.$executeRawUnsafe(
            `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND letter_id = $3`,
            CONN,
            queue,
            `l-${b * 13 + run}`,
          );
        }
      })();
      const counting = fillHeader(CONN, queue, "x-tenant", db);
      // Committed once the name is filling (the triggers count from there), a little later.
      const releasing = (async () => {
        await until(async () => (await stateOf(queue, "x-tenant")) === "filling");
        await new Promise((r) => setTimeout(r, 150 + run * 50));
        release();
      })();
      const [, , filled] = await Promise.all([early, writes, counting, releasing]);
      expect(filled.state).toBe("counted");
      expect(filled.writersWaitMs).toBeGreaterThan(50);
      await expectKeptEqualsRows(queue, "x-tenant");
    }
  });

  it("counts at most COUNTED_HEADERS_MAX names per DLQ, dropping the least recently used", async () => {
    const queue = `dlq-${randomUUID()}`;
    await write(queue, randomUUID(), 0, 40);
    for (let k = 0; k <= COUNTED_HEADERS_MAX; k++) {
      expect(await countNow(queue, `h-${k}`)).toBe("counted");
      if (k === 0) await countNow(queue, "x-tenant");
      // x-tenant stays in use, h-0 is not used again.
      await db.$executeRawUnsafe(
        `UPDATE triage_counted_headers SET used_at = now() + $3 * interval '1 second' WHERE connection_id = $1 AND queue = $2 AND name = 'x-tenant'`,
        CONN,
        queue,
        k + 1,
      );
    }
    const names = await db.$queryRawUnsafe<Array<{ name: string }>>(
      `SELECT name FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2 ORDER BY name`,
      CONN,
      queue,
    );
    expect(names).toHaveLength(COUNTED_HEADERS_MAX);
    expect(names.map((r) => r.name)).toContain("x-tenant");
    expect(names.map((r) => r.name)).not.toContain("h-0");
    expect(await stateOf(queue, "h-0")).toBeNull();
    await expectKeptEqualsRows(queue, "x-tenant");
  });
});

describe("who counts a header, and what a masked one shows", () => {
  const actors = {} as Record<"viewer" | "operator", Actor>;
  const meta = () => ({ requestId: randomUUID(), ip: "127.0.0.1" });
  beforeAll(async () => {
    for (const role of ["viewer", "operator"] as const) {
      const u = await createUser({
        email: `${role}-${randomUUID().slice(0, 8)}@header-stats.test`,
        role,
        password: "a-long-enough-password",
      });
      actors[role] = { id: u.id, email: u.email, name: null, role };
    }
  });

  it("a viewer's grouping asks for nothing; an operator's is counted by the worker while letters arrive", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan = randomUUID();
    await write(queue, scan, 0, 120);
    const ref = { connectionId: CONN, queue, by: "header:x-tenant" };
    const rows = await queryGroupsByRows(CONN, queue, "header:x-tenant", db);
    const byViewer = await listGroups(actors.viewer, meta(), ref);
    expect(byViewer.groups).toEqual(
      maskValueGroups("header:x-tenant", rows.groups, await maskingPolicy("viewer", CONN, queue)),
    );
    expect("counting" in byViewer && byViewer.counting).toBeFalsy();
    expect(await stateOf(queue, "x-tenant")).toBeNull();
    // The operator's page answers from the rows at once and says the counting is under way.
    const byOperator = await listGroups(actors.operator, meta(), ref);
    expect("counting" in byOperator && byOperator.counting).toBe(true);
    expect(byOperator.groups).toEqual(byViewer.groups);
    expect(await stateOf(queue, "x-tenant")).toBe("wanted");
    const worker = headerWorker(`hdr-${randomUUID()}`);
    worker.start();
    try {
      let b = 0;
      await until(async () => {
        await write(queue, scan, 120 + b * 20, 140 + b * 20);
        b++;
        return (await stateOf(queue, "x-tenant")) === "counted";
      });
      await write(queue, scan, 1000, 1030);
    } finally {
      await worker.stop();
    }
    await expectKeptEqualsRows(queue, "x-tenant");
    // Counted: the viewer now reads the kept counts, and sees what the rows say.
    const counted = await listGroups(actors.viewer, meta(), ref);
    expect("counting" in counted && counted.counting).toBeFalsy();
    expect(counted.groups).toEqual(
      maskValueGroups(
        "header:x-tenant",
        (await queryGroupsByRows(CONN, queue, "header:x-tenant", db)).groups,
        await maskingPolicy("viewer", CONN, queue),
      ),
    );
  });

  it("a round cut short is finished by the next holder of the lease", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan = randomUUID();
    await write(queue, scan, 0, 200);
    await listGroups(actors.operator, meta(), { connectionId: CONN, queue, by: "header:x-tenant" });
    // A worker died after the name started filling (the triggers keep its changes from then), with
    // the task's lease still its own for a while.
    await db.$executeRawUnsafe(
      `UPDATE triage_counted_headers SET state = 'filling' WHERE connection_id = $1 AND queue = $2 AND name = 'x-tenant'`,
      CONN,
      queue,
    );
    expect(await holdTaskLease("triage-header-counts", `dead-${randomUUID()}`, 3_000, db)).toBe(true);
    await write(queue, scan, 200, 260);
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND letter_id IN ('l-7', 'l-210')`,
      CONN,
      queue,
    );
    const worker = headerWorker(`hdr-${randomUUID()}`);
    worker.start();
    try {
      await new Promise((r) => setTimeout(r, 600));
      // Not while the dead worker's lease holds; counts half filled are never read meanwhile.
      expect(await stateOf(queue, "x-tenant")).toBe("filling");
      expect(await queryGroupsBy(CONN, queue, "header:x-tenant", db, { withCounting: true })).toEqual({
        ...(await queryGroupsByRows(CONN, queue, "header:x-tenant", db)),
        counting: true,
      });
      await until(async () => (await stateOf(queue, "x-tenant")) === "counted");
    } finally {
      await worker.stop();
    }
    await expectKeptEqualsRows(queue, "x-tenant");
  });

  it("a header filter's count comes from the kept count only for a role shown every value as stored", async () => {
    const queue = `dlq-${randomUUID()}`;
    await write(queue, randomUUID(), 0, 300);
    // One letter's x-tenant looks like an e-mail address: the default rules mask it for every role.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET headers = headers || '{"x-tenant": "someone@example.com"}' WHERE connection_id = $1 AND queue = $2 AND letter_id = 'l-1'`,
      CONN,
      queue,
    );
    expect(await countNow(queue, "x-tenant")).toBe("counted");
    expect(await countNow(queue, "x-app")).toBe("counted");
    await db.$executeRawUnsafe(
      `UPDATE triage_letters SET headers = headers || jsonb_build_object('x-app', 'a' || (id % 4)) WHERE connection_id = $1 AND queue = $2`,
      CONN,
      queue,
    );
    const direct = async (name: string, value: string) =>
      (
        await db.$queryRawUnsafe<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL AND headers @> $3::jsonb`,
          CONN,
          queue,
          JSON.stringify({ [name]: value }),
        )
      )[0].n;
    const count = async (role: "viewer" | "operator", name: string, value: string) =>
      (await listLetters(actors[role], meta(), { filter: { connectionId: CONN, queue, header: { name, value } } }))
        .count;
    for (const role of ["viewer", "operator"] as const) {
      expect(await count(role, "x-app", "a1")).toBe(await direct("x-app", "a1"));
      expect(await count(role, "x-tenant", "t2")).toBe(await direct("x-tenant", "t2"));
    }
    // Proof of which path answered: the kept count of x-app=a1 (every value shown as stored) and of
    // x-tenant=t2 (one value masked) made wrong on purpose.
    await db.$executeRawUnsafe(
      `UPDATE triage_header_stats SET n = n + 1000 WHERE connection_id = $1 AND queue = $2 AND kind = 't' AND value IN ('a1', 't2')`,
      CONN,
      queue,
    );
    for (const role of ["viewer", "operator"] as const) {
      expect(await count(role, "x-app", "a1")).toBe((await direct("x-app", "a1")) + 1000);
      // x-tenant is masked for some letter: its count never comes from the kept (raw) values.
      expect(await count(role, "x-tenant", "t2")).toBe(await direct("x-tenant", "t2"));
      // Any other criterion beside the header value: the rows answer.
      const withGone = await listLetters(actors[role], meta(), {
        filter: { connectionId: CONN, queue, header: { name: "x-app", value: "a1" }, includeGone: true },
      });
      expect(withGone.count).toBe(await direct("x-app", "a1"));
    }
  });

  it("a masked header grouped by a viewer from the kept counts shows one masked group", async () => {
    const queue = `dlq-${randomUUID()}`;
    await write(queue, randomUUID(), 0, 90);
    const ref = { connectionId: CONN, queue, by: "header:authorization" };
    await listGroups(actors.operator, meta(), ref);
    expect((await fillHeader(CONN, queue, "authorization", db)).state).toBe("counted");
    await expectKeptEqualsRows(queue, "authorization");
    const g = await listGroups(actors.viewer, meta(), ref);
    const rows = await queryGroupsByRows(CONN, queue, "header:authorization", db);
    expect(g.groups).toEqual(
      maskValueGroups("header:authorization", rows.groups, await maskingPolicy("viewer", CONN, queue)),
    );
    expect(JSON.stringify(g)).not.toContain("secret-");
    // Three raw values (and the letters without the header): one group as the viewer sees them.
    const shown = g.groups as Array<{ value: string | null; count: number }>;
    expect(shown.filter((x) => x.value !== null)).toHaveLength(1);
    expect(shown.reduce((n, x) => n + x.count, 0)).toBe(90);
  });
});
