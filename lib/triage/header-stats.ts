import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { MaintenanceTask } from "@/lib/jobs/worker";

/**
 * Kept counts for "group by a header" (migration *_triage_header_stats). A header name is counted
 * for one DLQ once a role that may start scans groups by it: the worker fills its counts from the
 * DLQ's present letters (fillHeader), and from then on statement triggers keep them as letters are written. Until
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
/** How long the worker waits for the writes in flight when a header starts counting (then it tries again next round). */
const WRITERS_WAIT_MS = 60_000;

/**
 * A header name's state for a DLQ: `wanted` (a role that may start scans asked for it; the worker
 * fills it), `filling` (the triggers keep its changes; the worker adds the letters already there),
 * `counted` (its counts are whole), `too_many` (never counted). Only `counted` counts are read.
 */
export type CountState = "counted" | "too_many" | "wanted" | "filling";
const STATES: readonly string[] = ["counted", "too_many", "wanted", "filling"];

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
  return state && STATES.includes(state) ? (state as CountState) : null;
}

/**
 * Records that a header should be counted for a DLQ (the caller decided the role may: it adds work
 * to every write). The worker's `fillWantedHeaders` counts it; until then grouping reads the rows.
 * At most COUNTED_HEADERS_MAX names wait per DLQ. Returns the name's state after the request, or
 * null when it was not recorded (a name too long, too many waiting).
 */
export async function requestHeaderCount(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
): Promise<CountState | null> {
  if (!name || name.length > NAME_MAX) return null;
  await db.$executeRawUnsafe(
    `INSERT INTO triage_counted_headers (connection_id, queue, name, state)
     SELECT $1, $2, $3, 'wanted'
     WHERE (SELECT count(*) FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2 AND state = 'wanted') < ${COUNTED_HEADERS_MAX}
     ON CONFLICT DO NOTHING`,
    connectionId,
    queue,
    name,
  );
  return headerCountState(connectionId, queue, name, db);
}

export interface FilledHeader {
  connectionId: string;
  queue: string;
  name: string;
  /** What the round left: `counted`, `too_many`, or still `filling` (writers did not finish in time; next round). */
  state: CountState | "dropped";
  /** Time spent waiting for the writes in flight when the name started counting (no lock is held). */
  writersWaitMs?: number;
  /** Time of the transaction that adds the letters already there and marks the name counted. */
  mergeMs?: number;
}

/**
 * One round of the worker (lib/worker.ts, a leased maintenance task): counts every header name
 * wanted or half filled, oldest first. Each step is one transaction that re-checks the name's state
 * under its row lock, so a round cut short (a restart, a lost lease, a second replica) leaves a
 * state the next round finishes, and counts are marked `counted` only whole.
 */
export async function fillWantedHeaders(
  db: PrismaClient = getDb(),
  opts: { signal?: AbortSignal; writersWaitMs?: number } = {},
): Promise<FilledHeader[]> {
  const todo = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string; name: string }>>(
    `SELECT connection_id, queue, name FROM triage_counted_headers WHERE state IN ('wanted', 'filling') ORDER BY counted_at, name`,
  );
  const out: FilledHeader[] = [];
  for (const t of todo) {
    if (opts.signal?.aborted) break;
    out.push(await fillHeader(t.connection_id, t.queue, t.name, db, opts));
  }
  return out;
}

/**
 * Counts one wanted header, without a lock on triage_letters:
 * 1. `wanted` → `filling` (one short transaction): from its commit every statement's trigger sees
 *    the name and adds its changes to triage_header_stats.
 * 2. Waits for every transaction that was writing triage_letters at that moment (pg_locks, as
 *    CREATE INDEX CONCURRENTLY waits): their statements may have run before the name was visible.
 * 3. One statement, so one snapshot S: the DLQ's present letters' counts at S, less what the
 *    triggers had kept for the name at S, added to the counts as they are now. What the triggers kept
 *    at S is what committed writes added, and those writes are in the letters at S; what they added
 *    after S is not. So each letter is counted once, whenever its write committed. Then `counted`.
 */
export async function fillHeader(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
  opts: { writersWaitMs?: number } = {},
): Promise<FilledHeader> {
  const key = { connectionId, queue, name };
  const lockState = async (tx: Tx) =>
    (
      await tx.$queryRawUnsafe<Array<{ state: string }>>(
        `SELECT state FROM triage_counted_headers WHERE connection_id = $1 AND queue = $2 AND name = $3 FOR UPDATE`,
        connectionId,
        queue,
        name,
      )
    )[0]?.state as CountState | undefined;
  let state: CountState | "dropped" = (await headerCountState(connectionId, queue, name, db)) ?? "dropped";
  if (state === "wanted") {
    // Too many values: decided from the letters (as the row grouping reads them), before the name
    // is visible to the triggers; such a name is recorded and never counted.
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
    state = await db.$transaction(async (tx) => {
      const now = await lockState(tx);
      if (now !== "wanted") return now ?? "dropped";
      // The least recently used names beyond the bound go, with their counts.
      await tx.$executeRawUnsafe(
        `WITH gone AS (
           DELETE FROM triage_counted_headers WHERE (connection_id, queue, name) IN (
             SELECT connection_id, queue, name FROM triage_counted_headers
             WHERE connection_id = $1 AND queue = $2 AND state <> 'wanted' AND name <> $3
             ORDER BY used_at DESC, name OFFSET ${COUNTED_HEADERS_MAX - 1})
           RETURNING name
         )
         DELETE FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name IN (SELECT name FROM gone)`,
        connectionId,
        queue,
        name,
      );
      // Rows left from an earlier time the name was counted (step 3 would cancel them; fewer to read).
      await tx.$executeRawUnsafe(
        `DELETE FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name = $3`,
        connectionId,
        queue,
        name,
      );
      const next: CountState = tooMany ? "too_many" : "filling";
      await tx.$executeRawUnsafe(
        `UPDATE triage_counted_headers SET state = $4, counted_at = now() WHERE connection_id = $1 AND queue = $2 AND name = $3`,
        connectionId,
        queue,
        name,
        next,
      );
      return next;
    });
  }
  if (state !== "filling") return { ...key, state };
  const waited = performance.now();
  if (!(await waitForWriters(db, opts.writersWaitMs ?? WRITERS_WAIT_MS))) return { ...key, state };
  const writersWaitMs = performance.now() - waited;
  const merged = performance.now();
  state = await db.$transaction(
    async (tx) => {
      const now = await lockState(tx);
      if (now !== "filling") return now ?? "dropped";
      await tx.$executeRawUnsafe(
        `WITH a AS (
           SELECT headers->>$3 AS value, (floor(extract(epoch FROM arrived_at) / 3600) * 3600)::bigint AS hour,
             count(*)::int AS n, min(arrived_at) AS first_at, max(arrived_at) AS last_at
           FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL GROUP BY 1, 2
         ),
         letters AS (
           SELECT 'v' AS kind, value, hour, n, first_at, last_at FROM a WHERE value IS NOT NULL
           UNION ALL
           SELECT 't', value, 0, sum(n)::int, min(first_at), max(last_at) FROM a WHERE value IS NOT NULL GROUP BY value
           UNION ALL
           SELECT 'n', '', hour, n, first_at, last_at FROM a WHERE value IS NULL
         ),
         kept AS (
           SELECT kind, value, hour, n FROM triage_header_stats WHERE connection_id = $1 AND queue = $2 AND name = $3
         )
         INSERT INTO triage_header_stats AS s (connection_id, queue, name, kind, value, hour, n, first_at, last_at)
         SELECT $1, $2, $3, kind, value, hour, COALESCE(l.n, 0) - COALESCE(k.n, 0),
           COALESCE(l.first_at, 'infinity'), COALESCE(l.last_at, '-infinity')
         FROM letters l FULL JOIN kept k USING (kind, value, hour)
         WHERE l.n IS NOT NULL OR k.n <> 0
         -- The triggers' order (the same name): concurrent writers lock these rows in one order.
         ORDER BY 4, 5, 6
         ON CONFLICT (connection_id, queue, name, kind, value, hour) DO UPDATE SET n = s.n + EXCLUDED.n,
           first_at = LEAST(s.first_at, EXCLUDED.first_at), last_at = GREATEST(s.last_at, EXCLUDED.last_at)`,
        connectionId,
        queue,
        name,
      );
      await tx.$executeRawUnsafe(
        `UPDATE triage_counted_headers SET state = 'counted', counted_at = now() WHERE connection_id = $1 AND queue = $2 AND name = $3`,
        connectionId,
        queue,
        name,
      );
      return "counted" as const;
    },
    { timeout: 600_000, maxWait: 15_000 },
  );
  return { ...key, state, writersWaitMs, mergeMs: performance.now() - merged };
}

/**
 * The worker's task (composed in lib/worker.ts): a leased maintenance round, so one replica at a
 * time; when its process dies the lease lapses and another (or the restarted one) takes over, and
 * the states in triage_counted_headers say where to go on.
 */
export function headerCountsTask(
  opts: { everyMs?: number; db?: () => PrismaClient; log?: (line: string) => void } = {},
): MaintenanceTask {
  const log = opts.log ?? ((line: string) => console.log(line));
  return {
    name: "triage-header-counts",
    everyMs: opts.everyMs ?? 5_000,
    firstAfterMs: Math.min(opts.everyMs ?? 5_000, 4_000),
    leased: true,
    run: async () => {
      for (const h of await fillWantedHeaders((opts.db ?? getDb)()))
        if (h.state !== "filling")
          log(
            `[triage] header ${h.name} of ${h.connectionId}/${h.queue}: ${h.state}` +
              (h.mergeMs !== undefined
                ? ` (waited ${Math.round(h.writersWaitMs ?? 0)} ms for writes in flight, counted in ${Math.round(h.mergeMs)} ms)`
                : ""),
          );
    },
  };
}

type Tx = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

/**
 * Waits until every transaction that holds a write lock on triage_letters now has ended (new ones
 * are not waited for, and nothing is locked). False if some still run after `maxMs`.
 */
async function waitForWriters(db: PrismaClient, maxMs: number): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ vx: string }>>(
    `SELECT DISTINCT virtualtransaction AS vx FROM pg_locks
     WHERE locktype = 'relation' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND relation = 'triage_letters'::regclass AND pid IS DISTINCT FROM pg_backend_pid()
       AND mode IN ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')`,
  );
  const vxs = rows.map((r) => r.vx);
  const until = performance.now() + maxMs;
  while (vxs.length > 0) {
    const left = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'virtualxid' AND virtualxid = ANY($1::text[])`,
      vxs,
    );
    if ((left[0]?.n ?? 0) === 0) return true;
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/**
 * How many present letters of the DLQ have `value` for a counted header (its kept 't' row), or
 * null when the header is not counted there (the caller counts the rows).
 */
export async function keptHeaderValueCount(
  connectionId: string,
  queue: string,
  name: string,
  value: string,
  db: PrismaClient = getDb(),
): Promise<number | null> {
  const rows = await db.$queryRawUnsafe<Array<{ n: number | null }>>(
    `SELECT (SELECT n FROM triage_header_stats s WHERE s.connection_id = $1 AND s.queue = $2 AND s.name = $3 AND s.kind = 't' AND s.value = $4) AS n
     FROM triage_counted_headers c WHERE c.connection_id = $1 AND c.queue = $2 AND c.name = $3 AND c.state = 'counted'`,
    connectionId,
    queue,
    name,
    value,
  );
  if (rows.length === 0) return null;
  return Math.max(Number(rows[0].n ?? 0), 0);
}

/** The values a counted header has among the DLQ's present letters (at most COUNTED_VALUES_MAX), or null when it is not counted. */
export async function keptHeaderValues(
  connectionId: string,
  queue: string,
  name: string,
  db: PrismaClient = getDb(),
): Promise<string[] | null> {
  const rows = await db.$queryRawUnsafe<Array<{ value: string | null }>>(
    `SELECT s.value FROM triage_counted_headers c
     LEFT JOIN triage_header_stats s ON s.connection_id = c.connection_id AND s.queue = c.queue AND s.name = c.name AND s.kind = 't' AND s.n > 0
     WHERE c.connection_id = $1 AND c.queue = $2 AND c.name = $3 AND c.state = 'counted'`,
    connectionId,
    queue,
    name,
  );
  if (rows.length === 0) return null;
  return rows.flatMap((r) => (r.value === null ? [] : [r.value]));
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
