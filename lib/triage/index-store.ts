import "server-only";
import type { Pool } from "pg";
import { getDb } from "@/lib/db";
import { closeDirectPools, directPool } from "@/lib/db-direct";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { VERSION_HEADERS, type IndexRow } from "./index-row";
import { BinaryArrayWriter, type BinaryElement } from "@/lib/pg-binary";
import { syncFailureIssues, type IssueTransition } from "./issue-sync";

/**
 * Writes to the triage index. Every statement is one round trip per batch (never per letter).
 */

/**
 * Columns refreshed when a letter is seen again (all but the identity and first_seen_at).
 *
 * The sealed payload is kept as stored when the letter's payload is the same (digest, cut,
 * presence) and was sealed under the key in force: a new nonce would make new ciphertext of the
 * same bytes, and writing it cost a rescan a new TOAST value per letter (and the old one to
 * vacuum). The stored one stays valid: its AAD names this very row. A payload under an older key
 * is sealed again, as before.
 */
const ON_CONFLICT = `ON CONFLICT (connection_id, queue, letter_id) DO UPDATE SET
       position = EXCLUDED.position, kafka_partition = EXCLUDED.kafka_partition, kafka_offset = EXCLUDED.kafka_offset,
       message_id = EXCLUDED.message_id, last_seen_at = EXCLUDED.last_seen_at, gone_at = NULL,
       dead_lettered_at = EXCLUDED.dead_lettered_at, retention_from = EXCLUDED.retention_from,
       arrived_at = COALESCE(EXCLUDED.dead_lettered_at, triage_letters.first_seen_at),
       reason = EXCLUDED.reason, origin_queue = EXCLUDED.origin_queue, exception_class = EXCLUDED.exception_class,
       exception_message = EXCLUDED.exception_message, exception_search = EXCLUDED.exception_search,
       search_version = EXCLUDED.search_version, normalized_message = EXCLUDED.normalized_message,
       top_frame = EXCLUDED.top_frame, group_key = EXCLUDED.group_key, group_label = EXCLUDED.group_label,
       group_basis = EXCLUDED.group_basis, disposition = EXCLUDED.disposition, rule_id = EXCLUDED.rule_id,
       receive_count = EXCLUDED.receive_count, headers = EXCLUDED.headers, body_size = EXCLUDED.body_size,
       sha256 = EXCLUDED.sha256, fingerprint = EXCLUDED.fingerprint, payload_ciphertext = CASE
         WHEN triage_letters.sha256 = EXCLUDED.sha256 AND triage_letters.payload_truncated = EXCLUDED.payload_truncated
           AND triage_letters.payload_key_id IS NOT DISTINCT FROM EXCLUDED.payload_key_id
           AND (triage_letters.payload_ciphertext IS NULL) = (EXCLUDED.payload_ciphertext IS NULL)
         THEN triage_letters.payload_ciphertext ELSE EXCLUDED.payload_ciphertext END,
       payload_key_id = EXCLUDED.payload_key_id, payload_truncated = EXCLUDED.payload_truncated,
       handled_outcome = EXCLUDED.handled_outcome, scan_id = EXCLUDED.scan_id`;

const INSERT_COLUMNS = `INSERT INTO triage_letters (
       connection_id, queue, letter_id, position, kafka_partition, kafka_offset, message_id,
       first_seen_at, last_seen_at, gone_at, dead_lettered_at, arrived_at, reason, origin_queue,
       exception_class, exception_message, normalized_message, top_frame, group_key, group_label,
       group_basis, disposition, rule_id, receive_count, headers, body_size, sha256, fingerprint,
       payload_ciphertext, payload_key_id, payload_truncated, handled_outcome, scan_id,
       exception_search, search_version, retention_from)`;

/** The row from `r`; `payload` is the expression that yields the ciphertext bytes. */
const selectRow = (
  payload: string,
) => `SELECT $1, $2, r.letter_id, r.position, r.kafka_partition, r.kafka_offset::bigint, r.message_id,
       now(), now(), NULL, r.dead_lettered_at::timestamptz, COALESCE(r.dead_lettered_at::timestamptz, now()), r.reason, r.origin_queue,
       r.exception_class, r.exception_message, r.normalized_message, r.top_frame, r.group_key, r.group_label,
       r.group_basis, r.disposition, r.rule_id, r.receive_count, COALESCE(r.headers::jsonb, '{}'::jsonb), r.body_size, r.sha256, r.fingerprint,
       ${payload}, r.payload_key_id, r.payload_truncated, r.handled_outcome, $3::uuid,
       r.exception_search::jsonb, r.search_version, r.retention_from::timestamptz`;

/** Through Prisma (PGlite, or a client other than the process one): the batch as one JSON parameter. */
const UPSERT_JSON = `${INSERT_COLUMNS}
     ${selectRow("decode(r.payload, 'base64')")}
     FROM json_to_recordset($4::json) AS r(
       letter_id text, position int, kafka_partition int, kafka_offset text, message_id text,
       dead_lettered_at timestamptz, reason text, origin_queue text, exception_class text,
       exception_message text, normalized_message text, top_frame text, group_key text,
       group_label text, group_basis text, disposition text, rule_id text, receive_count int,
       headers jsonb, body_size int, sha256 text, fingerprint text, payload text,
       payload_key_id text, payload_truncated boolean, handled_outcome text,
       exception_search jsonb, search_version int, retention_from timestamptz)
     ${ON_CONFLICT}`;

/**
 * Through pg directly (Postgres): one array per column, unnested together, each sent in Postgres's
 * binary array format (lib/pg-binary.ts). On 500-row batches of ~1 KB letters: median 45 ms against
 * 78 ms for json_to_recordset through Prisma (same run, load average 12 on 2 cores); Prisma also
 * kept several copies of each batch's JSON alive while it ran (heap snapshot). Text arrays then
 * spent ~13 µs per row in node-postgres escaping elements (mostly the base64 payload) and Postgres
 * parsed every character back: binary arrays and raw bytea payloads skip both.
 * dead_lettered_at and headers travel as text and are cast in SQL, as the text format did.
 */
/** A column: its name, its array's element type (also its SQL element type: int4[], bool[], ...), its encoder. */
type Column = {
  name: keyof IndexRow;
  element: BinaryElement;
  encode: (rows: IndexRow[], w: BinaryArrayWriter) => void;
};
// One getter per column (monomorphic property reads; `row[name]` with a varying name was not), and
// one column at a time, straight into its array: no array of values per column, no copy of it.
const text = (name: keyof IndexRow, get: (r: IndexRow) => string | null): Column => ({
  name,
  element: "text",
  encode: (rows, w) => {
    for (let i = 0; i < rows.length; i++) w.text(get(rows[i]));
  },
});
const int4 = (name: keyof IndexRow, get: (r: IndexRow) => number | null): Column => ({
  name,
  element: "int4",
  encode: (rows, w) => {
    for (let i = 0; i < rows.length; i++) w.int4(get(rows[i]));
  },
});
const UNNEST_COLUMNS: Column[] = [
  text("letter_id", (r) => r.letter_id),
  int4("position", (r) => r.position),
  int4("kafka_partition", (r) => r.kafka_partition),
  text("kafka_offset", (r) => r.kafka_offset),
  text("message_id", (r) => r.message_id),
  text("dead_lettered_at", (r) => r.dead_lettered_at),
  text("reason", (r) => r.reason),
  text("origin_queue", (r) => r.origin_queue),
  text("exception_class", (r) => r.exception_class),
  text("exception_message", (r) => r.exception_message),
  text("normalized_message", (r) => r.normalized_message),
  text("top_frame", (r) => r.top_frame),
  text("group_key", (r) => r.group_key),
  text("group_label", (r) => r.group_label),
  text("group_basis", (r) => r.group_basis),
  text("disposition", (r) => r.disposition),
  text("rule_id", (r) => r.rule_id),
  int4("receive_count", (r) => r.receive_count),
  text("headers", (r) => JSON.stringify(r.headers ?? {})),
  int4("body_size", (r) => r.body_size),
  text("sha256", (r) => r.sha256),
  text("fingerprint", (r) => r.fingerprint),
  {
    name: "payload",
    element: "bytea",
    encode: (rows, w) => {
      for (let i = 0; i < rows.length; i++) w.bytea(rows[i].payload);
    },
  },
  text("payload_key_id", (r) => r.payload_key_id),
  {
    name: "payload_truncated",
    element: "bool",
    encode: (rows, w) => {
      for (let i = 0; i < rows.length; i++) w.bool(rows[i].payload_truncated);
    },
  },
  text("handled_outcome", (r) => r.handled_outcome),
  text("exception_search", (r) => (r.exception_search ? JSON.stringify(r.exception_search) : null)),
  int4("search_version", (r) => r.search_version),
  text("retention_from", (r) => r.retention_from ?? null),
];
const UPSERT_UNNEST = `${INSERT_COLUMNS}
     ${selectRow("r.payload")}
     FROM unnest(${UNNEST_COLUMNS.map((c, i) => `$${i + 4}::${c.element}[]`).join(", ")})
       AS r(${UNNEST_COLUMNS.map((c) => c.name).join(", ")})
     ${ON_CONFLICT}`;

/**
 * Each column's bytes per row in the last batch encoded, as the next batch's first guess (a scan's
 * batches are alike): its array then rarely grows. Only a size hint, shared by every batch.
 */
const columnBytesPerRow = UNNEST_COLUMNS.map(() => 64);

function columnArrays(rows: IndexRow[]): Buffer[] {
  return UNNEST_COLUMNS.map((c, i) => {
    const w = new BinaryArrayWriter(c.element, columnBytesPerRow[i] * rows.length * 1.125 + 256);
    c.encode(rows, w);
    if (rows.length > 0) columnBytesPerRow[i] = w.byteLength / rows.length;
    return w.finish();
  });
}

/**
 * A small pg pool of its own for the bulk writes of scans (lib/db-direct.ts), on the server of
 * DATABASE_URL. The same statement through Prisma's driver adapter spent about as long in Node as
 * in Postgres. Used only when `db` is the process client on Postgres (so both reach the same
 * database); else Prisma.
 */
const bulkPool = (db: PrismaClient): Pool | null => directPool(db, "triage-bulk");

/** Closes the direct pools, this one included (scripts before dropping their database; a later write reopens it). */
export const closeBulkPool = closeDirectPools;

/**
 * A batch of rows encoded for its statement at once, so the rows themselves can be collected while
 * the write is in flight (a scan keeps a few writes in flight: holding their rows on the JS heap
 * made every young-generation collection copy them, then promote them).
 */
export type PreparedLetters =
  | { count: number; via: "pg"; pool: Pool; values: Buffer[] }
  | { count: number; via: "prisma"; db: PrismaClient; json: string };

export function prepareLetters(rows: IndexRow[], db: PrismaClient = getDb()): PreparedLetters {
  const pool = bulkPool(db);
  if (pool) return { count: rows.length, via: "pg", pool, values: columnArrays(rows) };
  const json = JSON.stringify(
    rows.map((r) => ({
      ...r,
      payload:
        r.payload && Buffer.from(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength).toString("base64"),
    })),
  );
  return { count: rows.length, via: "prisma", db, json };
}

/**
 * Inserts or refreshes a batch of letters of one DLQ with one INSERT … ON CONFLICT. A letter seen
 * again keeps its first-seen time, gets this scan's id and is present again (gone_at NULL).
 */
export async function writeLetters(
  connectionId: string,
  queue: string,
  scanId: string,
  batch: PreparedLetters,
): Promise<void> {
  if (batch.count === 0) return;
  if (batch.via === "pg") {
    await batch.pool.query({
      name: "triage_upsert_letters",
      text: UPSERT_UNNEST,
      values: [connectionId, queue, scanId, ...batch.values],
    });
    return;
  }
  await batch.db.$executeRawUnsafe(UPSERT_JSON, connectionId, queue, scanId, batch.json);
}

/** prepareLetters then writeLetters. */
export async function upsertLetters(
  connectionId: string,
  queue: string,
  scanId: string,
  rows: IndexRow[],
  db: PrismaClient = getDb(),
): Promise<void> {
  await writeLetters(connectionId, queue, scanId, prepareLetters(rows, db));
}

/**
 * After a complete scan: letters of this DLQ the scan did not see have left it. Returns how many.
 * With `since` (the database's time when the scan's read began), a letter another reader saw
 * after that (the indexer's tail, while the scan ran) is not one of them.
 */
export async function markGone(
  connectionId: string,
  queue: string,
  scanId: string,
  db: PrismaClient = getDb(),
  since?: Date,
): Promise<number> {
  return db.$executeRawUnsafe(
    `UPDATE triage_letters SET gone_at = now()
     WHERE connection_id = $1 AND queue = $2 AND scan_id <> $3::uuid AND gone_at IS NULL
       AND ($4::timestamptz IS NULL OR last_seen_at < $4::timestamptz)`,
    connectionId,
    queue,
    scanId,
    since?.toISOString() ?? null,
  );
}

/** The database's clock, for comparisons with the times it stamps (last_seen_at). */
export async function databaseNow(db: PrismaClient = getDb()): Promise<Date> {
  const [r] = await db.$queryRawUnsafe<Array<{ now: Date }>>(`SELECT now() AS now`);
  return new Date(r.now);
}

/** Width of one arrivals bucket for a group spanning `spanMs`: about 60 buckets, at least a minute. */
export function bucketSecondsFor(spanMs: number): number {
  const steps = [60, 300, 900, 3600, 6 * 3600, 86_400, 7 * 86_400];
  for (const s of steps) if (spanMs / 1000 / s <= 60) return s;
  return steps[steps.length - 1];
}

/** The present letters of group `m.group_key` of DLQ $1/$2 (the group index serves it). */
const PRESENT_OF_GROUP = `FROM triage_letters t WHERE t.connection_id = $1 AND t.queue = $2 AND t.group_key = m.group_key AND t.gone_at IS NULL`;
/** First and last present arrival of each group, by index probes bounded to the hours the counts name. */
const FIRST_AT = `(SELECT t.arrived_at ${PRESENT_OF_GROUP} AND t.arrived_at >= to_timestamp(m.lo) ORDER BY t.arrived_at, t.id LIMIT 1)`;
const NEWEST = `${PRESENT_OF_GROUP} AND t.arrived_at < to_timestamp(m.hi + 3600) ORDER BY t.arrived_at DESC, t.id DESC`;
/**
 * Per group with present letters: count, handled count and first/last hour (epoch seconds), from
 * the hour rows of triage_group_stats (168 a week per group; the minute rows are 60 times as many).
 */
const HOURS = `SELECT group_key, sum(n)::int AS count, sum(n_handled)::int AS handled_count,
    min(value::bigint) AS lo, max(value::bigint) AS hi
  FROM triage_group_stats WHERE connection_id = $1 AND queue = $2 AND kind = 'h' AND n > 0 GROUP BY group_key`;

/**
 * Recomputes the groups of one DLQ: counts, first/last arrival, origins, versions
 * (VERSION_HEADERS), reason, three newest sample ids and arrivals per time bucket. Made from
 * triage_group_stats, which statement triggers keep as letters are written (migration
 * *_triage_group_stats), plus a few index probes per group (first and last arrival, the newest
 * letters: its label and parts, and its message as the sample): no pass over the DLQ's letters.
 * Runs at the end of every scan; redrive calls it after removing letters. Then the groups' failure
 * issues follow (issue-sync.ts): returns the state changes that made (new, regressed, ignore ended).
 */
export async function refreshGroupSummary(
  connectionId: string,
  queue: string,
  db: PrismaClient = getDb(),
): Promise<IssueTransition[]> {
  await db.$transaction(
    async (tx) => {
      // The probes must walk the group index in its order. Right after a scan the planner has no
      // statistics for the new rows and took another index plus a sort (1 s for 50,000 letters
      // instead of 6 ms): without sorts, only an index in that order serves them. The cost a
      // disabled sort adds to the estimates would then start JIT compilation (3 s): off too.
      await tx.$executeRawUnsafe(`SET LOCAL enable_sort = off`);
      await tx.$executeRawUnsafe(`SET LOCAL jit = off`);
      const span = await tx.$queryRawUnsafe<Array<{ lo: Date | null; hi: Date | null }>>(
        `WITH m AS (${HOURS})
         SELECT min(${FIRST_AT}) AS lo, max((SELECT t.arrived_at ${NEWEST} LIMIT 1)) AS hi FROM m`,
        connectionId,
        queue,
      );
      const lo = span[0]?.lo ? new Date(span[0].lo) : new Date();
      const hi = span[0]?.hi ? new Date(span[0].hi) : lo;
      const bucket = bucketSecondsFor(hi.getTime() - lo.getTime());
      // Rows whose letters all left: nothing to show, and the table stays as small as the groups.
      await tx.$executeRawUnsafe(
        `DELETE FROM triage_group_stats WHERE connection_id = $1 AND queue = $2 AND n = 0 AND n_handled = 0`,
        connectionId,
        queue,
      );
      await tx.$executeRawUnsafe(
        `DELETE FROM triage_groups WHERE connection_id = $1 AND queue = $2`,
        connectionId,
        queue,
      );
      await tx.$executeRawUnsafe(
        `WITH st AS (
           SELECT group_key, kind, value, n FROM triage_group_stats
           WHERE connection_id = $1 AND queue = $2 AND kind <> 'm' AND n > 0
         ),
         m AS (${HOURS}),
         o AS (SELECT group_key, (array_agg(value ORDER BY value))[1:20] AS origins FROM st WHERE kind = 'o' GROUP BY group_key),
         v AS (SELECT group_key, (array_agg(value ORDER BY value))[1:10] AS versions FROM st WHERE kind = 'v' GROUP BY group_key),
         r AS (SELECT group_key, min(value) AS reason FROM st WHERE kind = 'r' GROUP BY group_key),
         b AS (
           SELECT group_key, jsonb_agg(jsonb_build_object('start', start, 'count', n) ORDER BY start) AS buckets FROM (
             SELECT group_key, date_bin(($3::int * interval '1 second'), to_timestamp(value::bigint), TIMESTAMPTZ '2000-01-01') AS start,
               sum(n)::int AS n
             FROM triage_group_stats WHERE connection_id = $1 AND queue = $2 AND kind = $4 AND n > 0 GROUP BY 1, 2
           ) x GROUP BY group_key
         )
         INSERT INTO triage_groups (connection_id, queue, group_key, label, basis, exception_class, normalized_message,
           sample_message, top_frame, reason, count, handled_count, first_at, last_at, origins, versions,
           sample_letter_ids, buckets, bucket_seconds, refreshed_at)
         SELECT $1, $2, m.group_key, nw.group_label, nw.group_basis, nw.exception_class, nw.normalized_message,
           nw.exception_message, nw.top_frame, r.reason, m.count, m.handled_count, f.first_at, nw.arrived_at,
           COALESCE(o.origins, '{}'), COALESCE(v.versions, '{}'),
           ARRAY(SELECT t.letter_id ${NEWEST} LIMIT 3), COALESCE(b.buckets, '[]'::jsonb), $3, now()
         FROM m
         CROSS JOIN LATERAL (SELECT ${FIRST_AT} AS first_at) f
         CROSS JOIN LATERAL (SELECT t.group_label, t.group_basis, t.exception_class, t.normalized_message,
           t.exception_message, t.top_frame, t.arrived_at ${NEWEST} LIMIT 1) nw
         LEFT JOIN o USING (group_key) LEFT JOIN v USING (group_key) LEFT JOIN r USING (group_key) LEFT JOIN b USING (group_key)
         WHERE f.first_at IS NOT NULL`,
        connectionId,
        queue,
        bucket,
        // Buckets of an hour or more (a span over 15 hours) add up hours; shorter ones, the span's minutes.
        bucket >= 3600 ? "h" : "m",
      );
    },
    { timeout: 120_000, maxWait: 15_000 },
  );
  return syncFailureIssues(db, connectionId, queue);
}

/**
 * The groups of one DLQ recomputed from its present letters alone, by aggregates over all of them
 * (what refreshGroupSummary did before triage_group_stats; seconds for a DLQ of a million letters).
 * Returns the rows refreshGroupSummary would write, without writing: for tests and checks that
 * the kept counts agree with the letters. `sample_message` is the newest letter's message, as there.
 */
export async function rebuildGroupSummary(
  connectionId: string,
  queue: string,
  db: PrismaClient = getDb(),
): Promise<Array<Record<string, unknown>>> {
  const span = await db.$queryRawUnsafe<Array<{ lo: Date | null; hi: Date | null }>>(
    `SELECT min(arrived_at) AS lo, max(arrived_at) AS hi FROM triage_letters WHERE connection_id = $1 AND queue = $2 AND gone_at IS NULL`,
    connectionId,
    queue,
  );
  const lo = span[0]?.lo ? new Date(span[0].lo) : new Date();
  const hi = span[0]?.hi ? new Date(span[0].hi) : lo;
  const bucket = bucketSecondsFor(hi.getTime() - lo.getTime());
  const versionExpr = `COALESCE(${VERSION_HEADERS.map((h) => `l.headers->>'${h.replace(/'/g, "''")}'`).join(", ")})`;
  return db.$queryRawUnsafe(
    `WITH present AS (
       SELECT l.id, l.letter_id, l.group_key, l.group_label, l.group_basis, l.exception_class, l.normalized_message, l.exception_message,
         l.top_frame, l.reason, l.handled_outcome, l.arrived_at, l.origin_queue, ${versionExpr} AS ver
       FROM triage_letters l WHERE l.connection_id = $1 AND l.queue = $2 AND l.gone_at IS NULL
     ),
     g AS (
       SELECT group_key, min(group_label) AS label, min(group_basis) AS basis, min(exception_class) AS exception_class,
         min(normalized_message) AS normalized_message, min(top_frame) AS top_frame,
         min(reason) AS reason, count(*)::int AS count, count(handled_outcome)::int AS handled_count,
         min(arrived_at) AS first_at, max(arrived_at) AS last_at,
         (array_remove(array_agg(DISTINCT origin_queue), NULL))[1:20] AS origins,
         (array_agg(letter_id ORDER BY arrived_at DESC, id DESC))[1:3] AS sample_letter_ids,
         (array_agg(exception_message ORDER BY arrived_at DESC, id DESC))[1] AS sample_message
       FROM present GROUP BY group_key
     ),
     v AS (
       SELECT group_key, (array_agg(DISTINCT ver))[1:10] AS versions FROM present WHERE ver IS NOT NULL GROUP BY group_key
     ),
     b AS (
       SELECT group_key, jsonb_agg(jsonb_build_object('start', start, 'count', n) ORDER BY start) AS buckets FROM (
         SELECT group_key, date_bin(($3::int * interval '1 second'), arrived_at, TIMESTAMPTZ '2000-01-01') AS start, count(*)::int AS n
         FROM present GROUP BY 1, 2
       ) x GROUP BY group_key
     )
     SELECT g.group_key, g.label, g.basis, g.exception_class, g.normalized_message, g.sample_message, g.top_frame,
       g.reason, g.count, g.handled_count, g.first_at, g.last_at, COALESCE(g.origins, '{}') AS origins,
       COALESCE(v.versions, '{}') AS versions, g.sample_letter_ids, COALESCE(b.buckets, '[]'::jsonb) AS buckets, $3::int AS bucket_seconds
     FROM g LEFT JOIN v USING (group_key) LEFT JOIN b USING (group_key) ORDER BY g.group_key`,
    connectionId,
    queue,
    bucket,
  );
}

/** Deletes index rows whose letter left its DLQ more than `days` ago. Returns how many. */
export async function deleteExpiredLetters(days: number, db: PrismaClient = getDb()): Promise<number> {
  return db.$executeRawUnsafe(
    `DELETE FROM triage_letters WHERE gone_at < now() - ($1::int * interval '1 day')`,
    Math.max(0, Math.floor(days)),
  );
}

export function retentionDays(): number {
  const n = Number.parseFloat(process.env.DLQ_INDEX_RETENTION_DAYS ?? "");
  return Number.isFinite(n) && n >= 0 ? n : 7;
}
