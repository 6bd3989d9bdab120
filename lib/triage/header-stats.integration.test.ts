import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/session";
import { createUser } from "@/lib/auth/users";
import { getDb } from "@/lib/db";
import { maskingPolicy } from "@/lib/masking/policy";
import { COUNTED_HEADERS_MAX, countHeader, headerCountState, queryHeaderGroupsKept } from "./header-stats";
import type { IndexRow } from "./index-row";
import { markGone, upsertLetters } from "./index-store";
import { type GroupByKey, queryGroupsBy, queryGroupsByRows } from "./queries";
import { indexRow } from "./test-kit";
import { listGroups, maskValueGroups } from "./use-cases";

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

describe("grouping by a counted header", () => {
  it("equals the rows' grouping after letters arrive, leave, return, change, are deleted and rescanned", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan1 = randomUUID();
    await upsertLetters(
      CONN,
      queue,
      scan1,
      range(0, 200).map((i) => letter(i)),
      db,
    );
    expect(await countHeader(CONN, queue, "x-tenant", db)).toBe("counted");
    await expectKeptEqualsRows(queue, "x-tenant");
    // New letters (written after the backfill: counted by the triggers).
    await upsertLetters(
      CONN,
      queue,
      scan1,
      range(200, 320).map((i) => letter(i)),
      db,
    );
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
    await upsertLetters(
      CONN,
      queue,
      randomUUID(),
      range(0, 150).map((i) => letter(i)),
      db,
    );
    expect(await headerCountState(CONN, queue, "x-tenant", db)).toBeNull();
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
    expect(await queryGroupsBy(CONN, queue, "header:x-tenant", db, { mayCount: true })).toEqual(rows);
    await expectKeptEqualsRows(queue, "x-tenant");
  });

  it("counts exactly when letters are written while the backfill runs", async () => {
    const queue = `dlq-${randomUUID()}`;
    const scan = randomUUID();
    await upsertLetters(
      CONN,
      queue,
      scan,
      range(0, 400).map((i) => letter(i)),
      db,
    );
    const writes = (async () => {
      for (let b = 0; b < 12; b++) {
        await upsertLetters(
          CONN,
          queue,
          scan,
          range(400 + b * 50, 450 + b * 50).map((i) => letter(i)),
          db,
        );
        await db.$executeRawUnsafe(
          `UPDATE triage_letters SET gone_at = now() WHERE connection_id = $1 AND queue = $2 AND letter_id = $3`,
          CONN,
          queue,
          `l-${b * 13}`,
        );
      }
    })();
    const counting = (async () => {
      await new Promise((r) => setTimeout(r, 15));
      return countHeader(CONN, queue, "x-tenant", db);
    })();
    const [, state] = await Promise.all([writes, counting]);
    expect(state).toBe("counted");
    await expectKeptEqualsRows(queue, "x-tenant");
  });

  it("counts at most COUNTED_HEADERS_MAX names per DLQ, dropping the least recently used", async () => {
    const queue = `dlq-${randomUUID()}`;
    await upsertLetters(
      CONN,
      queue,
      randomUUID(),
      range(0, 40).map((i) => letter(i)),
      db,
    );
    for (let k = 0; k <= COUNTED_HEADERS_MAX; k++) {
      expect(await countHeader(CONN, queue, `h-${k}`, db)).toBe("counted");
      if (k === 0) await countHeader(CONN, queue, "x-tenant", db);
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
    expect(await headerCountState(CONN, queue, "h-0", db)).toBeNull();
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

  it("a viewer's grouping reads the rows and counts nothing; an operator's starts counting", async () => {
    const queue = `dlq-${randomUUID()}`;
    await upsertLetters(
      CONN,
      queue,
      randomUUID(),
      range(0, 120).map((i) => letter(i)),
      db,
    );
    const ref = { connectionId: CONN, queue, by: "header:x-tenant" };
    const rows = await queryGroupsByRows(CONN, queue, "header:x-tenant", db);
    const byViewer = await listGroups(actors.viewer, meta(), ref);
    expect(byViewer.groups).toEqual(
      maskValueGroups("header:x-tenant", rows.groups, await maskingPolicy("viewer", CONN, queue)),
    );
    expect(await headerCountState(CONN, queue, "x-tenant", db)).toBeNull();
    await listGroups(actors.operator, meta(), ref);
    expect(await headerCountState(CONN, queue, "x-tenant", db)).toBe("counted");
    // Counted: the viewer now reads the kept counts, and sees the same.
    expect((await listGroups(actors.viewer, meta(), ref)).groups).toEqual(byViewer.groups);
    await expectKeptEqualsRows(queue, "x-tenant");
  });

  it("a masked header grouped by a viewer from the kept counts shows one masked group", async () => {
    const queue = `dlq-${randomUUID()}`;
    await upsertLetters(
      CONN,
      queue,
      randomUUID(),
      range(0, 90).map((i) => letter(i)),
      db,
    );
    const ref = { connectionId: CONN, queue, by: "header:authorization" };
    await listGroups(actors.operator, meta(), ref);
    expect(await headerCountState(CONN, queue, "authorization", db)).toBe("counted");
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
