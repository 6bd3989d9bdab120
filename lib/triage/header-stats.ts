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
export const COUNTED_HEADERS_MAX = 4;
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
            `WITH a AS (
               SELECT headers->>$3 AS value, (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint AS hour,
                 count(*)::int AS n, min(arrived_at) AS first_at, max(arrived_at) AS last_at
               FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL GROUP BY 1, 2
             )
             INSERT INTO triage_header_stats (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
             SELECT $1, $2, $3, 'v', value, hour, n, first_at, last_at FROM a WHERE value IS NOT NULL
             UNION ALL
             SELECT $1, $2, $3, 't', value, 0, sum(n), min(first_at), max(last_at) FROM a WHERE value IS NOT NULL GROUP BY value
             UNION ALL
             SELECT $1, $2, $3, 'n', '', hour, n, first_at, last_at FROM a WHERE value IS NULL`,
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
 * header) its count ('t', 'n' rows), its first and last non-empty hour (one probe each of the 'v' or
 * 'n' rows in hour order), then in each of those hours one probe of the DLQ's arrival index, from the
 * kept bound, for the exact first (last) present letter with that value. Rows as queryGroupsByRows
 * returns them; null if a probe found no letter where the counts say one is (the caller then reads
 * the rows).
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
        ? "l.arrived_at >= GREATEST(fh.first_at, to_timestamp(fh.hour)) AND l.arrived_at < to_timestamp(fh.hour + 3600)"
        : "l.arrived_at <= LEAST(lh.last_at, to_timestamp(lh.hour + 3600)) AND l.arrived_at >= to_timestamp(lh.hour)";
    return `CASE WHEN top.value IS NULL
       THEN (SELECT l.arrived_at ${present} AND ${range} AND l.headers->>$3 IS NULL ORDER BY l.arrived_at ${order} LIMIT 1)
       ELSE (SELECT l.arrived_at ${present} AND ${range} AND l.headers->>$3 = top.value ORDER BY l.arrived_at ${order} LIMIT 1) END`;
  };
  const hours = (order: "ASC" | "DESC") =>
    `SELECT s.hour, s.first_at, s.last_at FROM triage_header_stats s
     WHERE s.connection_id = $1 AND s.queue = $2 AND s.name = $3 AND s.kind = top.kind AND s.value = top.key AND s.n > 0
     ORDER BY s.hour ${order} LIMIT 1`;
  const rows = await db.$queryRawUnsafe<Row[]>(
    `WITH counts AS (
       SELECT value, n FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name = $3 AND kind = 't' AND n > 0
       UNION ALL
       SELECT NULL, sum(n)::int FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name = $3 AND kind = 'n' AND n > 0
       HAVING sum(n) > 0
     ),
     top AS (
       SELECT value, n, CASE WHEN value IS NULL THEN 'n' ELSE 'v' END AS kind, COALESCE(value, '') AS key
       FROM counts ORDER BY n DESC, value LIMIT 500
     )
     SELECT top.value, top.n, ${probe("ASC")} AS first_at, ${probe("DESC")} AS last_at
     FROM top CROSS JOIN LATERAL (${hours("ASC")}) fh CROSS JOIN LATERAL (${hours("DESC")}) lh
     ORDER BY top.n DESC, top.value`,
    connectionId,
    queue,
    name,
  );
  if (rows.some((r) => r.first_at == null || r.last_at == null)) return null;
  return rows;
}
