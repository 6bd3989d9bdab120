import "server-only";
import { recordAuditBatch, type AuditEntry } from "@/lib/audit";
import { auditFields, insertChained } from "@/lib/audit/batch";
import { directPool, directTransaction, takesBinaryParams } from "@/lib/db-direct";
import { binaryArray } from "@/lib/pg-binary";
import {
  countRowsByState,
  flushOwedAudit,
  ledgerPageOf,
  type LedgerDb,
  type LedgerJobContext,
  type LedgerTable,
} from "@/lib/jobs/ledger";
import type { MoveResult } from "@/lib/brokers/contract/move";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { LeaseLostError } from "@/lib/jobs/store";
import { whereOf, type LetterFilter } from "@/lib/triage/queries";
import type { LedgerState } from "./plan";

type Db = LedgerDb;
/** A database that can open a transaction (the fenced writes below need one). */
type TxDb = Db & Pick<PrismaClient, "$transaction">;
const TX = { maxWait: 15_000, timeout: 15_000 } as const;

/**
 * The lease fence. A run changes its ledger's letters (claims them, records their outcomes) only
 * while it holds its job's lease, checked inside the same transaction as the change and held there
 * (FOR KEY SHARE on the job's row): a worker's claim of the job (store.ts, FOR UPDATE SKIP LOCKED,
 * the only way a lease changes hands) passes it by while the change is under way, and once another
 * run holds the lease, a change of the old holder writes nothing. The holder's own heartbeats and
 * checkpoints (updates of other columns) are not held up, so a batch's write still overlaps the
 * next batch. Whatever a run finds in its ledger after it took the job over thus stays as it found
 * it, but for its own changes. Without the fence, a previous holder's outcome write held its rows
 * (uncommitted, waiting for the audit chain's lock), the new holder's claim skipped them (SKIP
 * LOCKED), found nothing left and finished, and the write then committed them back to "pending"
 * (a fault run ended "succeeded" with 323 letters pending). A change refused this way throws
 * LeaseLostError: its rows stay as claimed ("moving"), and the new holder asks for them again
 * ("Interrupted attempts" below).
 */
async function holdsLease(tx: Db, jobId: string, owner: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<Row[]>(
    `SELECT 1 AS held FROM jobs WHERE id = $1::uuid AND lease_owner = $2 AND state IN ('running', 'cancelling') FOR KEY SHARE`,
    jobId,
    owner,
  );
  return rows.length > 0;
}

/**
 * `change` in a transaction under the lease fence (see holdsLease); without an owner, as it is.
 */
export async function fenced<T>(
  db: Db | TxDb,
  jobId: string,
  owner: string | undefined,
  change: (tx: Db) => Promise<T>,
  raw = false,
): Promise<T> {
  if (owner === undefined) return change(db);
  return inTransaction(
    db,
    async (tx) => {
      if (!(await holdsLease(tx, jobId, owner))) throw new LeaseLostError(jobId);
      return change(tx);
    },
    raw,
  );
}

/**
 * `fenced` for a change of raw statements only (`$queryRawUnsafe`, `$executeRawUnsafe`): on the
 * process's Postgres client it runs on the direct pool (lib/db-direct.ts), without Prisma's
 * parameter encoding and transaction bookkeeping, and a Buffer parameter goes in binary format
 * (takesBinaryParams). Elsewhere (PGlite, another client) it is `fenced`.
 */
export function fencedRaw<T>(
  db: Db | TxDb,
  jobId: string,
  owner: string | undefined,
  change: (tx: Db) => Promise<T>,
): Promise<T> {
  return fenced(db, jobId, owner, change, true);
}

function inTransaction<T>(db: Db | TxDb, change: (tx: Db) => Promise<T>, raw: boolean): Promise<T> {
  const pool = raw ? directPool(db) : null;
  if (pool) return directTransaction(pool, (tx) => change(tx as unknown as Db));
  if (!("$transaction" in db)) throw new Error("this ledger change needs a database that opens transactions");
  return db.$transaction(change, TX);
}

/**
 * The lease fence of a single-statement change: `update` is an UPDATE whose WHERE says
 * `AND EXISTS (SELECT 1 FROM lease)`, its own parameters from $3 ($1 the job, $2 the owner). The
 * job's row is taken FOR KEY SHARE by the statement itself (held until it commits), as holdsLease
 * does in a transaction, so no takeover passes while it runs and none that committed before it is
 * missed. Without an owner, the job's row is all it needs. Returns the rows changed; with an
 * owner that does not hold the lease, nothing is changed and LeaseLostError is thrown.
 */
async function fencedUpdate(
  db: Db,
  jobId: string,
  owner: string | undefined,
  update: string | FencedChange,
  ...params: unknown[]
): Promise<number> {
  const { sql, returning = "1", after } = typeof update === "string" ? { sql: update } : update;
  const rows = await db.$queryRawUnsafe<Array<{ held: boolean; n: number }>>(
    `WITH lease AS (
       SELECT 1 FROM jobs WHERE id = $1::uuid
         AND ($2::text IS NULL OR (lease_owner = $2 AND state IN ('running', 'cancelling'))) FOR KEY SHARE),
     changed AS (${sql} RETURNING ${returning})${after ? `, ${after}` : ""}
     SELECT EXISTS (SELECT 1 FROM lease) AS held, (SELECT count(*) FROM changed)::int AS n`,
    jobId,
    owner ?? null,
    ...params,
  );
  if (owner !== undefined && !rows[0]?.held) throw new LeaseLostError(jobId);
  return Number(rows[0]?.n ?? 0);
}

/** An UPDATE for fencedUpdate, with what it returns (`changed`) and a data-modifying CTE that reads it (`after`). */
interface FencedChange {
  sql: string;
  returning?: string;
  after?: string;
}

/**
 * The breaker's record of a write that moved letters (redrive_moves): a CTE inserting one row with
 * the seqs of the rows of CTE `cte` (columns seq, state) now "moved", and the moved_at the write gave
 * them (now(): the same transaction), or nothing when it moved none.
 */
const RECORD_MOVES = (cte: string) => `moves AS (
       INSERT INTO redrive_moves (job_id, moved_at, moved, seqs)
       SELECT $1::uuid, now(), count(*)::int, array_agg(seq ORDER BY seq) FROM ${cte} WHERE state = 'moved' HAVING count(*) > 0)`;

/** An array parameter: binary on a DirectTx (no element escaped or scanned as text), else as it is. */
const textArray = (tx: Db, values: Array<string | null>) =>
  takesBinaryParams(tx) ? binaryArray("text", values) : values;
const boolArray = (tx: Db, values: boolean[]) => (takesBinaryParams(tx) ? binaryArray("bool", values) : values);

/**
 * Rows of a statement whose last SELECT is `TUPLES(tx, from, names)`, each as a Row of the columns
 * `names`. On a DirectTx the rows come as they are, read as arrays (no object per row in
 * node-postgres): Postgres only sends them. Elsewhere (Prisma's path: PGlite, another client)
 * they come aggregated as one json text value of arrays (one value to decode, not one per column
 * and row, and no column name repeated per row). The json costs the backend: backend CPU of a
 * 2,000-letter claim, 22 µs per letter returning json arrays against 10 returning the rows (9 with
 * no rows returned at all), and node-postgres decoded the rows in 6 µs per letter against 7 for
 * JSON.parse of the json (alternated, ten batches each, four rounds).
 */
async function tuples(tx: Db, names: readonly string[], sql: string, ...params: unknown[]): Promise<Row[]> {
  const asRow = (t: unknown[]) => {
    const r: Row = {};
    for (let i = 0; i < names.length; i++) r[names[i]] = t[i];
    return r;
  };
  if (takesBinaryParams(tx)) return (await tx.queryArrays(sql, params)).map(asRow);
  const out = await tx.$queryRawUnsafe<Array<{ rows: string | null }>>(sql, ...params);
  if (!out[0]?.rows) return [];
  return (JSON.parse(out[0].rows) as unknown[][]).map(asRow);
}

/**
 * The redrive ledger (`redrive_letters`): one row per letter, in triage index order (`seq`).
 * Every write is one statement per batch (arrays unnested), never one per letter.
 */

/**
 * x-dlq-redrive-count as the index holds it: the RabbitMQ/Kafka header, or the count inside the
 * combined SQS marker attribute (`x-dlq-redrive`, "id=…;count=N;…" or JSON with redriveCount).
 */
const PREV_COUNT_SQL = `COALESCE(
  substring(headers->>'x-dlq-redrive-count' from '^\\s*([0-9]{1,9})')::int,
  substring(headers->>'x-dlq-redrive' from '(?:count|redriveCount)"?\\s*[=:]\\s*([0-9]{1,9})')::int,
  0)`;

/** The triage index's WHERE clause for a selection: a filter, narrowed to chosen letter ids when given. */
export function selectionWhere(filter: LetterFilter, letterIds?: string[]): { sql: string; params: unknown[] } {
  const w = whereOf(filter);
  const params: unknown[] = [...w.params];
  let sql = w.sql;
  if (letterIds) {
    params.push(letterIds);
    sql += ` AND letter_id = ANY($${params.length}::text[])`;
  }
  return { sql, params };
}

/**
 * Fills the ledger from the triage index in one INSERT … SELECT; returns the rows written. Each row
 * gets its replay id here, the one every attempt's copy will carry: the claim then changes no indexed
 * column and is a HOT update (migration redrive_claim_hot).
 */
export async function populateLedger(
  db: Db,
  jobId: string,
  filter: LetterFilter,
  letterIds?: string[],
): Promise<number> {
  const { sql, params } = selectionWhere(filter, letterIds);
  params.push(jobId);
  const job = `$${params.length}::uuid`;
  return db.$executeRawUnsafe(
    `INSERT INTO redrive_letters (job_id, seq, letter_id, sha256, message_id, original_message_id, prev_count, state, audited, replay_id)
     SELECT ${job}, row_number() OVER (ORDER BY kafka_partition NULLS FIRST, kafka_offset NULLS FIRST, position, id)::int,
            letter_id, sha256, message_id, COALESCE(NULLIF(headers->>'x-dlq-original-message-id', ''), message_id),
            ${PREV_COUNT_SQL}, 'pending', true, gen_random_uuid()
     FROM triage_letters WHERE ${sql}`,
    ...params,
  );
}

export interface LedgerRow {
  id: string;
  seq: number;
  letterId: string;
  sha256: string;
  messageId: string | null;
  originalMessageId: string | null;
  prevCount: number;
  orderingKey: string | null;
  stage: string | null;
  state: LedgerState;
  attempts: number;
  destination: string | null;
  reason: string | null;
  replayId: string | null;
  movedAt: string | null;
  updatedAt: string;
  /** Set by the claims: the state the row had before this claim made it "moving". */
  prevState?: LedgerState;
}

type Row = Record<string, unknown>;
/**
 * A timestamp as `Date.toISOString()` writes it ("2026-12-06T08:30:11.564Z"), made by Postgres:
 * toRow then takes it as it is. Parsing each claimed row's two timestamps into a Date and back cost
 * about 5 µs per letter in the redrive bench's profile.
 */
const isoOf = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const colsOf = (
  a: string,
) => `${a}id::text AS id, ${a}seq, ${a}letter_id, ${a}sha256, ${a}message_id, ${a}original_message_id, ${a}prev_count, ${a}ordering_key,
  ${a}stage, ${a}state, ${a}attempts, ${a}destination, ${a}reason, ${a}replay_id::text AS replay_id,
  ${isoOf(`${a}moved_at`)} AS moved_at, ${isoOf(`${a}updated_at`)} AS updated_at`;
const COLS = colsOf("");
/** The columns of colsOf, as the claims return them (with prev_state), in the order of their json arrays. */
const CLAIMED = [
  "id",
  "seq",
  "letter_id",
  "sha256",
  "message_id",
  "original_message_id",
  "prev_count",
  "ordering_key",
  "stage",
  "state",
  "attempts",
  "destination",
  "reason",
  "replay_id",
  "moved_at",
  "updated_at",
  "prev_state",
] as const;
/** The columns a settled letter's audit row is made from (letterAuditEntry), in the order recordOutcomes returns them. */
const SETTLED = [
  "letter_id",
  "state",
  "stage",
  "destination",
  "reason",
  "replay_id",
  "prev_count",
  "attempts",
  "message_id",
  "sha256",
] as const;
/**
 * The rows of `from` in ledger order, the columns `names` (tuples): as they are on a DirectTx, else
 * as one json text value of arrays.
 */
const TUPLES = (tx: Db, from: string, names: readonly string[]) =>
  takesBinaryParams(tx)
    ? `SELECT ${names.join(", ")} FROM ${from} ORDER BY seq`
    : `SELECT json_agg(json_build_array(${names.join(", ")}) ORDER BY seq)::text AS rows FROM ${from}`;
/**
 * How a claim's UPDATE finds the rows its `pick` CTE chose and locked: by primary key, from the
 * picked ids as one array (an index scan of exactly those rows). Joined to `pick` (`FROM pick WHERE
 * r.id = pick.id`), the planner hashed the pick and read every row of the table to probe it (a
 * sequential scan per claim: 20,000 rows for each batch of 2,000 in a 20,000-letter job, and the
 * whole table's rows, every job's, in a larger one).
 */
const PICKED = "r.id = ANY (ARRAY(SELECT id FROM pick))";
/** The claimed rows with the state each had before the claim (`pick.prev_state`), joined on the two CTEs only. */
const WITH_PREV = "(SELECT c.*, p.prev_state FROM claimed c JOIN pick p ON p.id = c.rid) claimed";
function toRow(r: Row): LedgerRow {
  const iso = (v: unknown) =>
    typeof v === "string" && ISO_UTC.test(v) ? v : v ? new Date(v as string).toISOString() : null;
  return {
    id: String(r.id),
    seq: Number(r.seq),
    letterId: r.letter_id as string,
    sha256: r.sha256 as string,
    messageId: (r.message_id as string) ?? null,
    originalMessageId: (r.original_message_id as string) ?? null,
    prevCount: Number(r.prev_count),
    orderingKey: (r.ordering_key as string) ?? null,
    stage: (r.stage as string) ?? null,
    state: r.state as LedgerState,
    attempts: Number(r.attempts),
    destination: (r.destination as string) ?? null,
    reason: (r.reason as string) ?? null,
    replayId: (r.replay_id as string) ?? null,
    movedAt: iso(r.moved_at),
    updatedAt: iso(r.updated_at)!,
    ...(r.prev_state ? { prevState: r.prev_state as LedgerState } : {}),
  };
}

const LEDGER: LedgerTable<LedgerRow> = {
  table: "redrive_letters",
  cols: COLS,
  toRow,
  unsettled: ["pending", "moving", "interrupted", "unconfirmed"],
};

/**
 * Interrupted attempts. A row is "moving" from its claim (which gives it the replay id its copy
 * carries) until its outcome is recorded. A row still "moving" when a run starts, or left without
 * an outcome when a move was broken off by an error (not a refusal before anything moved, such as
 * a queue not found), belongs to an attempt whose outcome is
 * unknown: the letter may be in the target (confirmed, and removed from the DLQ or not) or still
 * only in the DLQ. Such rows become "interrupted" and are asked for again, with the same replay id:
 *  - still in the DLQ: moved now (a copy the interrupted attempt had confirmed but not removed is
 *    then at the target twice, both copies with the same x-dlq-replay-id: the duplicate window);
 *  - not in the DLQ: "unconfirmed". It may be moved, or only invisible for a while: unacked by a
 *    connection the broker has not yet seen die (RabbitMQ requeues it moments later), or hidden by
 *    the dead holder's SQS visibility timeout. So it is asked for again by the verification pass
 *    at the end of the job (after a settling delay); still gone then, it is recorded as moved by
 *    the interrupted attempt ("confirmed after restart"), not "missing": a move removes a letter
 *    only after the target confirmed its copy, and the job holds its DLQ (no scan or second
 *    redrive runs on it), so that attempt is what took it out. Seen back in the DLQ carrying this
 *    job's replay id, it was moved and came back ("returned").
 * What this cannot tell apart: a letter that something outside the console consumed or expired in
 * that same window (counted as moved; the reason says how it was concluded and its replay id names
 * the copy to look for), or one hidden for longer than the settling delay (an SQS visibility
 * timeout of a holder that died: it reappears in the DLQ after the job ended as moved).
 * A letter that was never claimed, or whose attempt ended with an outcome, is never concluded
 * moved this way: gone from the DLQ, it is "missing".
 */
export async function countMoving(db: Db, jobId: string): Promise<number> {
  const r = await db.$queryRawUnsafe<Row[]>(
    `SELECT count(*)::int AS n FROM redrive_letters WHERE job_id = $1::uuid AND state = 'moving'`,
    jobId,
  );
  return Number(r[0]?.n ?? 0);
}

/** Rows left "moving" (all, or these letters) become "interrupted"; returns how many. */
export async function interruptMoving(db: Db, jobId: string, letterIds?: string[]): Promise<number> {
  return db.$executeRawUnsafe(
    `UPDATE redrive_letters SET state = 'interrupted', updated_at = now()
     WHERE job_id = $1::uuid AND state = 'moving' AND ($2::text[] IS NULL OR letter_id = ANY($2::text[]))`,
    jobId,
    letterIds ?? null,
  );
}

/** Marks the first k letters (index order) as the sample, once. */
export async function assignSample(db: Db, jobId: string, k: number): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE redrive_letters SET stage = 'sample' WHERE id IN (
       SELECT id FROM redrive_letters WHERE job_id = $1::uuid ORDER BY seq LIMIT $2)
     AND NOT EXISTS (SELECT 1 FROM redrive_letters WHERE job_id = $1::uuid AND stage = 'sample')`,
    jobId,
    k,
  );
}

/**
 * Claims the next letters to ask for, in index order after `afterSeq` (the run's cursor,
 * BatchMover.claimAfter), in ONE statement: "pending" and
 * "interrupted" ones (of the sample, or any), made "moving" with attempt + 1 and the stage. A row
 * keeps the replay id it was given (by populateLedger; a row written before that, by its first
 * claim): every copy of one letter this job publishes carries the
 * same x-dlq-replay-id, so a duplicate is recognisable as one. Rows locked by another claimer are
 * skipped, so two runs of one job (a lease taken over while the old holder still runs) never claim
 * the same letter. Each row comes back with `prevState`.
 */
export async function claimNext(
  db: Db | TxDb,
  jobId: string,
  stage: "sample" | "bulk",
  limit: number,
  owner?: string,
  afterSeq = -1,
): Promise<LedgerRow[]> {
  const rows = await fencedRaw(db, jobId, owner, async (tx) =>
    tuples(
      await inSeqOrder(tx, owner),
      CLAIMED,
      `WITH pick AS (
       SELECT id, state AS prev_state FROM redrive_letters
       WHERE job_id = $1::uuid AND seq > $4 AND state IN ('pending', 'interrupted') ${stage === "sample" ? "AND stage = 'sample'" : ""}
       ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE redrive_letters r SET state = 'moving', attempts = r.attempts + 1, replay_id = COALESCE(r.replay_id, gen_random_uuid()), stage = $2, updated_at = now()
       WHERE ${PICKED}
       RETURNING ${colsOf("r.")}, r.id AS rid)
     ${TUPLES(tx, WITH_PREV, CLAIMED)}`,
      jobId,
      stage,
      limit,
      afterSeq,
    ),
  );
  return rows.map(toRow);
}

/**
 * Undoes claims of rows that were never sent (a batch claimed ahead, BatchMover.claimAhead, when
 * the run pauses, is cancelled or breaks off before moving it): each row goes back to the state the
 * claim found it in (`prevState`: "pending" or "interrupted") and its attempt is taken back, so the
 * ledger says what happened: nothing. Only rows still "moving" change; under the lease fence (a
 * run that lost its lease leaves them "moving", and the new holder asks for them again). Returns
 * the rows changed.
 */
export async function releaseClaims(db: Db, jobId: string, rows: LedgerRow[], owner?: string): Promise<number> {
  if (rows.length === 0) return 0;
  return fencedUpdate(
    db,
    jobId,
    owner,
    `UPDATE redrive_letters r SET state = u.prev_state, attempts = GREATEST(r.attempts - 1, 0), updated_at = now()
     FROM unnest($3::bigint[], $4::text[]) AS u(id, prev_state)
     WHERE r.job_id = $1::uuid AND r.id = u.id AND r.state = 'moving' AND EXISTS (SELECT 1 FROM lease)`,
    rows.map((r) => r.id),
    rows.map((r) => r.prevState ?? "pending"),
  );
}

/**
 * In a claim's transaction (with an owner: fenced), no bitmap scans: the pick then walks the
 * (job_id, seq) index in order from the cursor and stops at its limit. A ledger is written in one
 * INSERT when its job is made, and until autovacuum analyzes the table the planner takes the job
 * for a few dozen rows: it read every remaining row of the job through a bitmap scan and sorted
 * them, for every claim (EXPLAIN ANALYZE at letter 8,000 of 20,000: 12,000 rows read, 6.8 ms,
 * against 2,000 rows and 1.4 ms in order), so a job's claims together read its rows about
 * (letters / batch) / 2 times over. Returns `tx`.
 */
async function inSeqOrder(tx: Db, owner: string | undefined): Promise<Db> {
  if (owner !== undefined) await tx.$executeRawUnsafe("SET LOCAL enable_bitmapscan = off");
  return tx;
}

/**
 * The final verification pass: claims letters reported "missing" or "unconfirmed" (index order, after `afterSeq`)
 * so they are asked for again, in ONE statement (state moving, attempt + 1, replay id kept). A
 * letter that was only held by another reader (a previous holder of the job's lease still had it
 * unacked; on SQS, hidden by another receiver) is in the DLQ again and moves now; one that really
 * is gone comes back "missing".
 */
export async function claimMissing(
  db: Db | TxDb,
  jobId: string,
  afterSeq: number,
  limit: number,
  owner?: string,
): Promise<LedgerRow[]> {
  const rows = await fencedRaw(db, jobId, owner, (tx) =>
    tuples(
      tx,
      CLAIMED,
      `WITH pick AS (
       SELECT id, state AS prev_state FROM redrive_letters
       WHERE job_id = $1::uuid AND (state IN ('missing', 'unconfirmed') OR (state = 'failed' AND retry_later)) AND seq > $2
       ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE redrive_letters r SET state = 'moving', attempts = r.attempts + 1, replay_id = COALESCE(r.replay_id, gen_random_uuid()), updated_at = now()
       WHERE ${PICKED}
       RETURNING ${colsOf("r.")}, r.id AS rid)
     ${TUPLES(tx, WITH_PREV, CLAIMED)}`,
      jobId,
      afterSeq,
      limit,
    ),
  );
  return rows.map(toRow);
}

export interface Settled {
  letterId: string;
  state: LedgerState;
  destination: string | null;
  reason: string | null;
  orderingKey: string | null;
  /** "failed", but most likely still in the DLQ out of reach (`MoveResult.retryLater`): asked for again before the job ends. */
  retryLater?: boolean;
}

/**
 * A move result as the ledger records it. `row` is the claimed row: a letter not in the DLQ after
 * an interrupted attempt is "unconfirmed" (see "Interrupted attempts"), and stays so when asked
 * for again and still not there.
 */
export function settledOf(
  r: MoveResult,
  movedState: "moved" | "parked",
  row?: Pick<LedgerRow, "prevState" | "replayId">,
): Settled {
  if (r.outcome === "missing" && (row?.prevState === "interrupted" || row?.prevState === "unconfirmed")) {
    return {
      letterId: r.letterId,
      state: "unconfirmed",
      destination: null,
      reason: `Not in the DLQ after an interrupted attempt of this job (replay id ${row.replayId ?? "?"}): most likely ${movedState === "moved" ? "moved" : "parked"} by it. Confirmed before the job ends if it is still not in the DLQ then.`,
      orderingKey: r.orderingKey,
    };
  }
  const state: LedgerState = r.outcome === "moved" ? movedState : r.outcome;
  const reason =
    r.outcome === "failed" && movedState === "parked"
      ? `Could not park it: ${r.reason ?? "the parking target refused it"}`
      : r.reason;
  const retryLater = r.outcome === "failed" && r.retryLater === true && movedState === "moved";
  return { letterId: r.letterId, state, destination: r.destination, reason, orderingKey: r.orderingKey, retryLater };
}

/**
 * The end of "Interrupted attempts": letters still "unconfirmed" after the last verification pass
 * are recorded as moved (or parked, when the job parks by moving and the letter was due to be
 * parked) by the interrupted attempt; their audit rows are owed. Returns how many. With `owner`,
 * under the lease fence (fencedUpdate): a run whose lease was taken over changes nothing.
 */
export async function confirmUnconfirmed(
  db: Db,
  jobId: string,
  redriveLimit: number,
  parksByMoving: boolean,
  owner?: string,
): Promise<number> {
  return fencedUpdate(
    db,
    jobId,
    owner,
    {
      returning: "seq, state",
      after: RECORD_MOVES("changed"),
      sql: `UPDATE redrive_letters SET
       state = CASE WHEN $4 AND prev_count >= $3 THEN 'parked' ELSE 'moved' END,
       moved_at = CASE WHEN $4 AND prev_count >= $3 THEN moved_at ELSE now() END,
       reason = (CASE WHEN $4 AND prev_count >= $3 THEN 'Parked' ELSE 'Moved' END) || ' (confirmed after restart): an attempt of this job (replay id ' || COALESCE(replay_id::text, '?') ||
         ') was interrupted before its outcome was recorded, and the letter was not in the DLQ when it was asked for again, twice, the second time at the end of the job. A letter leaves the DLQ only after its copy was confirmed at the target.',
       audited = false, updated_at = now()
     WHERE job_id = $1::uuid AND state = 'unconfirmed' AND EXISTS (SELECT 1 FROM lease)`,
    },
    redriveLimit,
    parksByMoving,
  );
}

/**
 * Outcomes of a batch, in one statement. A row can also go back to "pending" (the broker was away:
 * not the letter's fault) or to "interrupted" (outcome unknown), or be "unconfirmed"; those owe no
 * audit row yet. A confirmed move (moved, parked) also replaces "missing": after a lease takeover
 * the previous holder may still have moved a letter that the new run, not seeing it, had recorded
 * as missing.
 *
 * In one transaction under the lease fence (`audit.owner`, see holdsLease): the outcomes, then the
 * audit rows of the rows the statement settled (one per letter, as flushAudit writes them, in
 * ledger order, after `audit.before`), chained in one INSERT, the rows marked audited as they are
 * written. The outcome and its audit row commit together (no gap, no duplicate), without reading
 * the rows back or updating them a second time, and a run whose lease was taken over writes no
 * outcome (LeaseLostError; `before`, rows about what was done to the letters, is written on its own
 * first). The ledger rows are locked before the audit chain's lock is waited for: the fence keeps
 * every other run off them meanwhile. The rows are found by primary key when `audit.rowIds` gives
 * every outcome's row (the batch's claimed rows: `id = ANY`, an index scan of those rows whatever
 * the statistics say), else through (job_id, letter_id) with the batch's letter ids as one array
 * (`letter_id = ANY ($2)`): joined to the unnested outcomes alone, the planner read every row of the
 * job (a sequential scan per batch) to hash them, and while a new ledger is not analyzed it still
 * reads them all through a bitmap scan of the job (EXPLAIN ANALYZE: 20,000 rows for a batch of
 * 2,000).
 */
/**
 * The outcome's rows by primary key ($8, the claimed rows' ids). The job is checked, not looked up
 * (IS NOT DISTINCT FROM is no index condition): with `job_id = $1` the planner, taking a new ledger
 * for a few dozen rows, still chose a bitmap scan of the job's rows and filtered them by id.
 */
const BY_ROW_ID = "r.id = ANY ($8::text[]::bigint[]) AND r.job_id IS NOT DISTINCT FROM $1::uuid";

/**
 * Nested loops off for the outcome's UPDATE (`allowed` false), then back to the database's own
 * setting before the audit rows (`allowed` true). When the ledger's statistics say almost no row
 * is "moving" (every earlier job's rows are "moved"), the planner takes the batch's rows for one
 * row and joins them to the unnested outcomes in a nested loop whose inner side is the function
 * scan: the outcomes' arrays unnested again for every row, and every pair compared. EXPLAIN
 * ANALYZE of a batch of 500: "Rows Removed by Join Filter: 249500", 70-160 ms per batch,
 * quadratic in the batch (bench:redrive-rate after its rate-limited runs, 2026-12-06: Postgres
 * 576-698 µs per letter against 92-98 with a hash join). A hash join reads each side once.
 */
async function nestedLoops(tx: Db, allowed: boolean): Promise<void> {
  await tx.$executeRawUnsafe(`SET LOCAL enable_nestloop ${allowed ? "TO DEFAULT" : "= off"}`);
}

export async function recordOutcomes(
  db: TxDb,
  jobId: string,
  outcomes: Settled[],
  audit: {
    ctx: LetterAuditContext;
    before?: AuditEntry[];
    owner: string;
    /** The ledger row id of each letter (LedgerRow.id), by letter id. */
    rowIds?: ReadonlyMap<string, string>;
  },
): Promise<void> {
  const { ctx, before = [], owner, rowIds } = audit;
  const ids =
    rowIds && outcomes.every((o) => rowIds.has(o.letterId)) ? outcomes.map((o) => rowIds.get(o.letterId)!) : null;
  const unsettled = new Set<string>(LEDGER.unsettled);
  try {
    await fencedRaw(db, jobId, owner, async (tx) => {
      if (outcomes.length > 0) await nestedLoops(tx, false);
      const rows =
        outcomes.length === 0
          ? []
          : await tuples(
              tx,
              SETTLED,
              `WITH settled AS (
                 UPDATE redrive_letters r SET state = u.state, destination = u.destination, reason = u.reason,
                   ordering_key = COALESCE(u.ordering_key, r.ordering_key), audited = true, updated_at = now(),
                   moved_at = CASE WHEN u.state = 'moved' THEN now() ELSE r.moved_at END, retry_later = u.retry_later
                 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[]) AS u(letter_id, state, destination, reason, ordering_key, retry_later)
                 WHERE ${ids ? BY_ROW_ID : "r.job_id = $1::uuid AND r.letter_id = ANY ($2::text[])"} AND r.letter_id = u.letter_id
                   AND (r.state IN ('moving', 'pending', 'interrupted') OR (r.state IN ('missing', 'unconfirmed') AND u.state IN ('moved', 'parked')))
                 RETURNING r.seq, r.${SETTLED.join(", r.")}),
               ${RECORD_MOVES("settled")}
               ${TUPLES(tx, "settled", SETTLED)}`,
              jobId,
              textArray(
                tx,
                outcomes.map((o) => o.letterId),
              ),
              textArray(
                tx,
                outcomes.map((o) => o.state),
              ),
              textArray(
                tx,
                outcomes.map((o) => o.destination),
              ),
              textArray(
                tx,
                outcomes.map((o) => o.reason),
              ),
              textArray(
                tx,
                outcomes.map((o) => o.orderingKey),
              ),
              boolArray(
                tx,
                outcomes.map((o) => o.state === "failed" && o.retryLater === true),
              ),
              ...(ids ? [textArray(tx, ids)] : []),
            );
      if (outcomes.length > 0) await nestedLoops(tx, true);
      const owed: AuditEntry[] = [];
      for (const r of rows) if (!unsettled.has(r.state as string)) owed.push(letterAuditEntry(ctx, settledRow(r)));
      const entries = before.length > 0 ? [...before, ...owed] : owed;
      if (entries.length === 0) return;
      const at = new Date().toISOString();
      await insertChained(
        tx,
        entries.map((e) => auditFields(e, at)),
      );
    });
  } catch (e) {
    // What was done to the letters (a repair, its archived original) happened whoever holds the lease.
    if (e instanceof LeaseLostError && before.length > 0) await recordAuditBatch(before);
    throw e;
  }
}

/**
 * Letters recorded moved in a batch whose connection then broke: the copy at the target is
 * confirmed, but the DLQ copy's removal may have been lost with the connection (RabbitMQ never
 * confirms an ack). The next run looks for them in the DLQ (see `leftoverRows`).
 */
export async function markLeftoverCheck(db: Db, jobId: string, letterIds: string[]): Promise<void> {
  if (letterIds.length === 0) return;
  await db.$executeRawUnsafe(
    `UPDATE redrive_letters SET leftover_check = true WHERE job_id = $1::uuid AND state IN ('moved', 'parked') AND letter_id = ANY($2::text[])`,
    jobId,
    letterIds,
  );
}

/** Whether any letter of the job is flagged for the leftover check. */
export async function hasLeftovers(db: Db, jobId: string): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<Array<{ one: number }>>(
    `SELECT 1 AS one FROM redrive_letters WHERE job_id = $1::uuid AND leftover_check LIMIT 1`,
    jobId,
  );
  return rows.length > 0;
}

/** The letters `markLeftoverCheck` flagged, with what it takes to find their DLQ copy (at most one window per broken batch). */
export async function leftoverRows(db: Db, jobId: string): Promise<Array<{ letterId: string; sha256: string }>> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT letter_id, sha256 FROM redrive_letters WHERE job_id = $1::uuid AND leftover_check ORDER BY seq`,
    jobId,
  );
  return rows.map((r) => ({ letterId: r.letter_id as string, sha256: r.sha256 as string }));
}

/** Clears the flag once the DLQ was looked at; `removed` letters get a note in their reason. */
/**
 * Clears the leftover flags of letters that were looked for. `removed`: their DLQ copy was found and
 * removed. `kept`: identified by content alone, so not looked for (an identical twin never moved
 * could have answered): the DLQ may hold a duplicate of the moved copy, and the ledger says so.
 */
export async function clearLeftoverCheck(
  db: Db,
  jobId: string,
  letterIds: string[],
  removed: string[],
  kept: string[] = [],
): Promise<void> {
  if (letterIds.length === 0) return;
  await db.$executeRawUnsafe(
    `UPDATE redrive_letters SET leftover_check = false, updated_at = now(),
       reason = CASE WHEN letter_id = ANY($3::text[]) THEN 'Moved; the connection broke before the broker had taken the DLQ copy away, so that copy came back to the DLQ and was removed when the job resumed (the copy at the target was confirmed).'
                     WHEN letter_id = ANY($4::text[]) THEN 'Moved (the copy at the target was confirmed); the connection broke before the broker had surely taken the DLQ copy away. This letter has no id of its own, so the console cannot tell a copy that came back from an identical letter that was never moved, and removed nothing: the DLQ may hold a duplicate of it, never a loss.'
                     ELSE reason END
     WHERE job_id = $1::uuid AND letter_id = ANY($2::text[])`,
    jobId,
    letterIds,
    removed,
    kept,
  );
}

/**
 * Letters seen back in the DLQ under this job: moved (or unconfirmed: so it was moved) → returned.
 * Returns how many rows changed. With `owner`, under the lease fence (fencedUpdate).
 */
export async function markReturned(db: Db, jobId: string, replayIds: string[], owner?: string): Promise<number> {
  if (replayIds.length === 0) return 0;
  return fencedUpdate(
    db,
    jobId,
    owner,
    `UPDATE redrive_letters SET state = 'returned', audited = false, updated_at = now(),
       reason = 'Came back to the DLQ after it was redriven: the consumer failed it again.'
     WHERE job_id = $1::uuid AND state IN ('moved', 'unconfirmed') AND replay_id = ANY($3::uuid[]) AND EXISTS (SELECT 1 FROM lease)`,
    replayIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id)),
  );
}

/** Ordering keys of letters that failed earlier in the job (still in the DLQ): later letters with these keys are held back. */
export async function failedKeys(db: Db, jobId: string): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT DISTINCT ordering_key FROM redrive_letters WHERE job_id = $1::uuid AND state IN ('failed', 'checksum_mismatch') AND ordering_key IS NOT NULL`,
    jobId,
  );
  return rows.map((r) => r.ordering_key as string);
}

/** Counts per state (one indexed GROUP BY; run at the start of a run, then kept in memory). */
export async function countStates(
  db: Db,
  jobId: string,
): Promise<
  Record<LedgerState, number> & { sample: number; samplePending: number; sampleReturned: number; retryLater: number }
> {
  const rows = await countRowsByState(
    db,
    "redrive_letters",
    jobId,
    `, count(*) FILTER (WHERE stage = 'sample')::int AS s,
            count(*) FILTER (WHERE retry_later)::int AS r`,
  );
  const out = {
    pending: 0,
    moving: 0,
    interrupted: 0,
    unconfirmed: 0,
    moved: 0,
    failed: 0,
    missing: 0,
    checksum_mismatch: 0,
    parked: 0,
    skipped: 0,
    returned: 0,
    sample: 0,
    /** Sample letters not yet asked for ("pending" or "interrupted"). */
    samplePending: 0,
    sampleReturned: 0,
    /** "failed" letters to ask for again before the job ends (`retry_later`). */
    retryLater: 0,
  };
  for (const r of rows) {
    out[r.state as LedgerState] = Number(r.n);
    if (r.state === "failed") out.retryLater = Number(r.r);
    out.sample += Number(r.s);
    if (r.state === "pending" || r.state === "interrupted") out.samplePending += Number(r.s);
    if (r.state === "returned") out.sampleReturned = Number(r.s);
  }
  return out;
}

/**
 * The breaker's sliding window: the last `window` letters this job moved since `since` (by moved_at,
 * then seq, latest first), and how many came back. Read from redrive_moves, which records each
 * write's moved letters (RECORD_MOVES): the job's latest writes up to the one that reaches `window`
 * letters (and any other write with that same moved_at), then those letters' ledger rows by
 * (job_id, seq). A letter once moved stays "moved" or becomes "returned", so those writes hold the
 * whole window. No index of redrive_letters names moved_at: the outcome stays a HOT update.
 */
export async function breakerWindow(
  db: Db,
  jobId: string,
  window: number,
  since: Date | null,
): Promise<{ redriven: number; returned: number }> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `WITH b AS (
       SELECT moved_at, seqs, sum(moved) OVER (ORDER BY moved_at DESC, id DESC) - moved AS before
       FROM redrive_moves WHERE job_id = $1::uuid AND ($3::timestamptz IS NULL OR moved_at >= $3::timestamptz)),
     edge AS (SELECT min(moved_at) AS t FROM b WHERE before < $2)
     SELECT count(*)::int AS redriven, count(*) FILTER (WHERE state = 'returned')::int AS returned FROM (
       SELECT r.state FROM b JOIN edge ON b.moved_at >= edge.t CROSS JOIN LATERAL unnest(b.seqs) AS s(seq)
       JOIN redrive_letters r ON r.job_id = $1::uuid AND r.seq = s.seq
       WHERE r.state IN ('moved', 'returned')
       ORDER BY b.moved_at DESC, s.seq DESC LIMIT $2) w`,
    jobId,
    window,
    since ? since.toISOString() : null,
  );
  return { redriven: Number(rows[0]?.redriven ?? 0), returned: Number(rows[0]?.returned ?? 0) };
}

/** A keyset page of the ledger in index order, optionally one state. */
export function ledgerPage(
  db: Db,
  jobId: string,
  opts: { afterSeq?: number; limit?: number; state?: LedgerState },
): Promise<{ rows: LedgerRow[]; nextSeq: number | null }> {
  return ledgerPageOf(db, LEDGER, jobId, opts);
}

export type LetterAuditContext = LedgerJobContext;

const ACTION_OF: Partial<Record<LedgerState, string>> = { parked: "letter.park", returned: "letter.redrive_returned" };

/** What a settled letter's audit row says (recordOutcomes reads only these: SETTLED). */
type SettledRow = Pick<
  LedgerRow,
  | "letterId"
  | "state"
  | "stage"
  | "destination"
  | "reason"
  | "replayId"
  | "prevCount"
  | "attempts"
  | "messageId"
  | "sha256"
>;
function settledRow(r: Row): SettledRow {
  return {
    letterId: r.letter_id as string,
    state: r.state as LedgerState,
    stage: (r.stage as string) ?? null,
    destination: (r.destination as string) ?? null,
    reason: (r.reason as string) ?? null,
    replayId: (r.replay_id as string) ?? null,
    prevCount: Number(r.prev_count),
    attempts: Number(r.attempts),
    messageId: (r.message_id as string) ?? null,
    sha256: r.sha256 as string,
  };
}

/** The audit row of one settled letter (scope "letter", operation id = job id, in the name of the redrive's starter). */
function letterAuditEntry(ctx: LetterAuditContext, r: SettledRow): AuditEntry {
  return {
    actor: { id: ctx.actor.id, email: ctx.actor.email, role: ctx.actor.role as "operator" | "admin" | null },
    action: ACTION_OF[r.state] ?? "letter.redrive",
    outcome: r.state === "moved" || r.state === "parked" || r.state === "skipped" ? "success" : "failure",
    operationId: ctx.jobId,
    scope: "letter",
    connectionId: ctx.connectionId,
    queue: ctx.queue,
    target: r.letterId,
    // In sorted key order: the row's MAC then serialises them in one JSON.stringify (canonicalJson).
    details: {
      attempts: r.attempts,
      destination: r.destination,
      messageId: r.messageId,
      reason: r.reason,
      redriveCount: r.state === "parked" ? r.prevCount : r.prevCount + 1,
      replayId: r.replayId,
      sha256: r.sha256,
      stage: r.stage,
      state: r.state,
    },
  };
}

/** Writes the audit rows owed for settled letters, then marks them written (jobs/ledger `flushOwedAudit`). */
export function flushAudit(db: Db, ctx: LetterAuditContext, batch = 1000): Promise<number> {
  return flushOwedAudit(db, LEDGER, ctx.jobId, (r) => letterAuditEntry(ctx, r), batch);
}
