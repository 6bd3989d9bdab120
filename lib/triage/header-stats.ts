import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * Kept counts for "group by a header" (migration *_triage_header_stats). A header name is counted
 * for one DLQ once a role that may start scans groups by it: countHeader fills its counts from the
 * DLQ's present letters, and from then on statement triggers keep them as letters are written. Until
 * then (and for a viewer, who may not add work to every write), grouping reads the rows.
 *
 * Header names are what the filter and the row grouping use: the JSON key exactly (case-sensitive),
 * the value `headers->>name`.
 */

/** Header names counted per DLQ; adding one more drops the least recently used. */
export const COUNTED_HEADERS_MAX = 8;
/** A header with more values than this in a DLQ (a request id) is not counted: its grouping reads the rows. */
export const COUNTED_VALUES_MAX = 10_000;
/** Longest header name counted (names are free text from the request). */
const NAME_MAX = 200;
/** How long a backfill waits for the writers in flight before giving up (the grouping then reads the rows). */
const LOCK_TIMEOUT = "5s";

export type CountState = "counted" | "too_many";

/** Whether a header's values are counted for a DLQ; marks it used (at most once a minute). */
export async function headerCountState(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
): Promise<CountState | null> {
  const rows = await db.$queryRawUnsafe<Array<{ state: string }>>(
    `WITH touched AS (
       UPDATE triage_counted_headers SET used_at = now()
       WHERE connection_id = $1 AND queue = $2 AND name = $3 AND used_at < now() - interval '1 minute'
     )
     SELECT state FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2 AND name = $3`,
    connectionId,
    queue,
    name,
  );
  const state = rows[0]?.state;
  return state === "counted" || state === "too_many" ? state : null;
}

/**
 * Starts counting a header's values for a DLQ: its present letters' values and hours, written with
 * the name in one transaction that holds a SHARE lock on triage_letters. That lock waits for every
 * write in flight to commit and holds new ones until this commits, so each letter is counted once:
 * either its write committed before the backfill read the table (and its trigger, not seeing the
 * name, counted nothing), or its statement runs after the name is visible (and its trigger counts
 * it). Writers wait for the backfill: about a second per million letters of the DLQ (docs/benchmarks.md).
 * Drops the least recently used name of the DLQ beyond COUNTED_HEADERS_MAX. Returns the state, or
 * null when it could not (the lock not had within LOCK_TIMEOUT, a name too long).
 */
export async function countHeader(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
): Promise<CountState | null> {
  if (!name || name.length > NAME_MAX) return null;
  // Too many values: decided without the lock (a read of the DLQ's present letters, as the row
  // grouping does); such a name is recorded and never counted by the triggers.
  const distinct = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM (
       SELECT DISTINCT headers->>$3 FROM triage_letters
       WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL AND headers->>$3 IS NOT NULL LIMIT ${COUNTED_VALUES_MAX + 1}
     ) x`,
    connectionId,
    queue,
    name,
  );
  const tooMany = (distinct[0]?.n ?? 0) > COUNTED_VALUES_MAX;
  try {
    return await db.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
        await tx.$executeRawUnsafe(`SET LOCAL jit = off`);
        await tx.$executeRawUnsafe(`LOCK TABLE triage_letters IN SHARE MODE`);
        // Counted meanwhile by another request: nothing to do.
        const had = await tx.$queryRawUnsafe<Array<{ state: string }>>(
          `SELECT state FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2 AND name = $3`,
          connectionId,
          queue,
          name,
        );
        if (had[0]) return had[0].state as CountState;
        // The least recently used beyond the bound, and their counts (no trigger writes them while
        // the lock is held; rows a writer left for a name dropped earlier go with them).
        await tx.$executeRawUnsafe(
          `WITH gone AS (
             DELETE FROM triage_counted_headers WHERE (connection_id, queue, name) IN (
               SELECT connection_id, queue, name FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2
               ORDER BY used_at DESC, name OFFSET ${COUNTED_HEADERS_MAX - 1})
             RETURNING name
           )
           DELETE FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name IN (SELECT name FROM gone)`,
          connectionId,
          queue,
        );
        await tx.$executeRawUnsafe(
          `DELETE FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name = $3`,
          connectionId,
          queue,
          name,
        );
        const state: CountState = tooMany ? "too_many" : "counted";
        await tx.$executeRawUnsafe(
          `INSERT INTO triage_counted_headers (connection_id, queue, name, state) VALUES ($1, $2, $3, $4)`,
          connectionId,
          queue,
          name,
          state,
        );
        if (state === "counted") {
          await tx.$executeRawUnsafe(
            `INSERT INTO triage_header_stats (connection_id, queue, name, value, hour, n, first_at, last_at)
             SELECT connection_id, queue, $3, headers->>$3, (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint,
               count(*), min(arrived_at), max(arrived_at)
             FROM triage_letters
             WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL AND headers->>$3 IS NOT NULL
             GROUP BY 1, 2, 3, 4, 5`,
            connectionId,
            queue,
            name,
          );
        }
        return state;
      },
      { timeout: 600_000, maxWait: 15_000 },
    );
  } catch (e) {
    // 55P03 lock_not_available: writers held the table; 23505: another request added it first.
    const code = (e as { code?: string; meta?: { code?: string } })?.meta?.code ?? (e as { code?: string })?.code;
    if (/55P03|23505|lock timeout|duplicate key/i.test(`${code} ${(e as Error)?.message}`)) return null;
    throw e;
  }
}

type Row = Record<string, unknown>;

/**
 * Grouping by a counted header, from its kept counts: per value (and for the letters without the
 * header: the DLQ's present letters per hour, kind 'h' of triage_group_stats, less those with a
 * value) the count and its first and last non-empty hour; then in each of those hours one probe of
 * the DLQ's arrival index, from the kept bound, for the exact first (last) present letter with that
 * value. Rows as queryGroupsByRows returns them; null if a probe found no letter where the counts
 * say one is (the caller then reads the rows).
 */
export async function queryHeaderGroupsKept(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
): Promise<Row[] | null> {
  const present = `FROM triage_letters l WHERE l.connection_id = $1 AND l.queue = $2 AND l.gone_at IS NULL`;
  const probe = (order: "ASC" | "DESC") => {
    const range =
      order === "ASC"
        ? "l.arrived_at >= top.lo_at AND l.arrived_at < to_timestamp(top.lo + 3600)"
        : "l.arrived_at <= top.hi_at AND l.arrived_at >= to_timestamp(top.hi)";
    return `CASE WHEN top.value IS NULL
       THEN (SELECT l.arrived_at ${present} AND ${range} AND l.headers->>$3 IS NULL ORDER BY l.arrived_at ${order} LIMIT 1)
       ELSE (SELECT l.arrived_at ${present} AND ${range} AND l.headers->>$3 = top.value ORDER BY l.arrived_at ${order} LIMIT 1) END`;
  };
  const rows = await db.$queryRawUnsafe<Row[]>(
    `WITH hs AS MATERIALIZED (
       SELECT value, hour, n, first_at, last_at FROM triage_header_stats
       WHERE connection_id = $1 AND queue = $2 AND name = $3 AND n > 0
     ),
     v AS (SELECT value, sum(n)::int AS n, min(hour) AS lo, max(hour) AS hi FROM hs GROUP BY value),
     h AS (
       SELECT value::bigint AS hour, sum(n)::int AS n FROM triage_group_stats
       WHERE connection_id = $1 AND queue = $2 AND kind = 'h' AND n > 0 GROUP BY 1
     ),
     hv AS (SELECT hour, sum(n)::int AS n FROM hs GROUP BY hour),
     nh AS (SELECT h.hour, h.n - COALESCE(hv.n, 0) AS n FROM h LEFT JOIN hv USING (hour) WHERE h.n > COALESCE(hv.n, 0)),
     counts AS (
       SELECT v.value, v.n, v.lo, v.hi, GREATEST(f.first_at, to_timestamp(v.lo)) AS lo_at, LEAST(l.last_at, to_timestamp(v.hi + 3600)) AS hi_at
       FROM v JOIN hs f ON f.value = v.value AND f.hour = v.lo JOIN hs l ON l.value = v.value AND l.hour = v.hi
       UNION ALL
       SELECT NULL, sum(n)::int, min(hour), max(hour), to_timestamp(min(hour)), to_timestamp(max(hour) + 3600) FROM nh HAVING sum(n) > 0
     ),
     top AS (SELECT * FROM counts ORDER BY n DESC, value LIMIT 500)
     SELECT top.value, top.n, ${probe("ASC")} AS first_at, ${probe("DESC")} AS last_at
     FROM top ORDER BY top.n DESC, top.value`,
    connectionId,
    queue,
    name,
  );
  if (rows.some((r) => r.first_at == null || r.last_at == null)) return null;
  return rows;
}
