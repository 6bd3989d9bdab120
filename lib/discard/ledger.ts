import "server-only";
import {
  countByState,
  flushOwedAudit,
  ledgerPageOf,
  type LedgerDb,
  type LedgerJobContext,
  type LedgerTable,
} from "@/lib/jobs/ledger";
import { whereOf, type LetterFilter } from "@/lib/triage/queries";

type Db = LedgerDb;

/**
 * The discard ledger (`discard_letters`): one row per letter, in triage index order (`seq`). Every
 * write is one statement per batch. A row is "removing" while the broker holds it for this run;
 * a resumed run puts those back to "pending" and asks the broker again.
 */
export const DISCARD_STATES = ["pending", "removing", "discarded", "failed", "missing", "checksum_mismatch"] as const;
export type DiscardState = (typeof DISCARD_STATES)[number];

/**
 * The letters a discard of this selection applies to: the filter's live letters (or the chosen ids
 * among them), minus letters the console already handled where the broker keeps them (Kafka).
 * One WHERE for the count the admin confirms and for the ledger, so the two always agree.
 */
function discardWhere(filter: LetterFilter, letterIds?: string[]): { sql: string; params: unknown[] } {
  const w = whereOf(filter);
  const params = [...w.params];
  let sql = `${w.sql} AND handled_outcome IS NULL`;
  if (letterIds) {
    params.push(letterIds);
    sql += ` AND letter_id = ANY($${params.length}::text[])`;
  }
  return { sql, params };
}

export async function countDiscardable(db: Db, filter: LetterFilter, letterIds?: string[]): Promise<number> {
  const w = discardWhere(filter, letterIds);
  const r = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM triage_letters WHERE ${w.sql}`,
    ...w.params,
  );
  return Number(r[0]?.n ?? 0);
}

/** Fills the ledger from the triage index in one INSERT … SELECT; returns the rows written. */
export async function populateDiscardLedger(
  db: Db,
  jobId: string,
  filter: LetterFilter,
  letterIds?: string[],
): Promise<number> {
  const { sql, params } = discardWhere(filter, letterIds);
  params.push(jobId);
  return db.$executeRawUnsafe(
    `INSERT INTO discard_letters (job_id, seq, letter_id, sha256, message_id, state, audited)
     SELECT $${params.length}::uuid, row_number() OVER (ORDER BY kafka_partition NULLS FIRST, kafka_offset NULLS FIRST, position, id)::int,
            letter_id, sha256, message_id, 'pending', true
     FROM triage_letters WHERE ${sql}`,
    ...params,
  );
}

/** The ledger of a discard of one letter the triage index does not hold, as the start read it from the DLQ. */
export async function addUnindexedLetter(
  db: Db,
  jobId: string,
  l: { letterId: string; sha256: string; messageId: string | null },
): Promise<number> {
  return db.$executeRawUnsafe(
    `INSERT INTO discard_letters (job_id, seq, letter_id, sha256, message_id, state, audited)
     VALUES ($1::uuid, 1, $2, $3, $4, 'pending', true)`,
    jobId,
    l.letterId,
    l.sha256,
    l.messageId,
  );
}

export interface DiscardRow {
  id: string;
  seq: number;
  letterId: string;
  sha256: string;
  messageId: string | null;
  state: DiscardState;
  attempts: number;
  reason: string | null;
  archiveId: string | null;
  discardedAt: string | null;
  updatedAt: string;
}

type Row = Record<string, unknown>;
const COLS = `id::text AS id, seq, letter_id, sha256, message_id, state, attempts, reason, archive_id::text AS archive_id, discarded_at, updated_at`;
const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
function toRow(r: Row): DiscardRow {
  return {
    id: String(r.id),
    seq: Number(r.seq),
    letterId: r.letter_id as string,
    sha256: r.sha256 as string,
    messageId: (r.message_id as string) ?? null,
    state: r.state as DiscardState,
    attempts: Number(r.attempts),
    reason: (r.reason as string) ?? null,
    archiveId: (r.archive_id as string) ?? null,
    discardedAt: iso(r.discarded_at),
    updatedAt: iso(r.updated_at)!,
  };
}

const LEDGER: LedgerTable<DiscardRow> = {
  table: "discard_letters",
  cols: COLS,
  toRow,
  unsettled: ["pending", "removing"],
};

/** After a crash or a lost lease: rows left "removing" go back to "pending" (attempts kept). */
export async function resetRemoving(db: Db, jobId: string): Promise<number> {
  return db.$executeRawUnsafe(
    `UPDATE discard_letters SET state = 'pending', updated_at = now() WHERE job_id = $1::uuid AND state = 'removing'`,
    jobId,
  );
}

/**
 * Claims the next pending letters in index order in one statement (SKIP LOCKED: two runs never claim
 * one letter). The picked ids are found by primary key as one array: written `id IN (subquery)`,
 * the planner hashed the pick and read every row of the table to probe it (300,000 rows, 32 ms of
 * a 77 ms claim; the redrive ledger's claim had the same plan, lib/redrive/ledger.ts PICKED).
 */
export async function claimPending(db: Db, jobId: string, limit: number): Promise<DiscardRow[]> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `UPDATE discard_letters d SET state = 'removing', attempts = d.attempts + 1, updated_at = now()
     WHERE d.id = ANY (ARRAY(SELECT id FROM discard_letters WHERE job_id = $1::uuid AND state = 'pending' ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED))
     RETURNING ${COLS}`,
    jobId,
    limit,
  );
  return rows.map(toRow).sort((a, b) => a.seq - b.seq);
}

export interface DiscardSettled {
  letterId: string;
  state: Exclude<DiscardState, "pending" | "removing">;
  reason: string | null;
  archiveId: string | null;
  /**
   * Removed in a batch whose connection then broke, on a broker that never confirms a removal
   * (`capabilities.removalUnconfirmed`): the DLQ copy may be back. Flagged in the same statement as
   * the outcome, so no crash leaves such a letter recorded discarded and unflagged (./leftovers.ts).
   */
  leftoverCheck?: boolean;
}

/** Outcomes of a batch in one statement; their audit rows are owed (`audited = false`) until flushDiscardAudit. */
export async function recordDiscardOutcomes(db: Db, jobId: string, outcomes: DiscardSettled[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.$executeRawUnsafe(
    `UPDATE discard_letters d SET state = u.state, reason = u.reason, archive_id = COALESCE(u.archive_id::uuid, d.archive_id), audited = false, updated_at = now(),
       discarded_at = CASE WHEN u.state = 'discarded' THEN now() ELSE d.discarded_at END,
       leftover_check = d.leftover_check OR (u.state = 'discarded' AND u.leftover)
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[]) AS u(letter_id, state, reason, archive_id, leftover)
     WHERE d.job_id = $1::uuid AND d.letter_id = u.letter_id AND d.state IN ('removing', 'pending')`,
    jobId,
    outcomes.map((o) => o.letterId),
    outcomes.map((o) => o.state),
    outcomes.map((o) => o.reason),
    outcomes.map((o) => o.archiveId),
    outcomes.map((o) => o.leftoverCheck === true),
  );
}

export type DiscardCounts = Record<DiscardState, number>;

export function countDiscardStates(db: Db, jobId: string): Promise<DiscardCounts> {
  return countByState(db, "discard_letters", jobId, DISCARD_STATES);
}

export function discardLedgerPage(
  db: Db,
  jobId: string,
  opts: { afterSeq?: number; limit?: number; state?: DiscardState },
): Promise<{ rows: DiscardRow[]; nextSeq: number | null }> {
  return ledgerPageOf(db, LEDGER, jobId, opts);
}

export interface DiscardAuditContext extends LedgerJobContext {
  reason: string;
}

/**
 * Writes the audit rows owed for settled letters (one per letter, scope "letter", action
 * `letter.discard`, operation id = job id), then marks them written (jobs/ledger `flushOwedAudit`).
 */
export function flushDiscardAudit(db: Db, ctx: DiscardAuditContext, batch = 1000): Promise<number> {
  return flushOwedAudit(
    db,
    LEDGER,
    ctx.jobId,
    (r) => ({
      actor: { id: ctx.actor.id, email: ctx.actor.email, role: ctx.actor.role as "admin" | null },
      action: "letter.discard",
      outcome: r.state === "discarded" ? ("success" as const) : ("failure" as const),
      operationId: ctx.jobId,
      scope: "letter" as const,
      connectionId: ctx.connectionId,
      queue: ctx.queue,
      target: r.letterId,
      // In sorted key order: the row's MAC then serialises them in one JSON.stringify (canonicalJson).
      details: {
        archiveId: r.archiveId,
        attempts: r.attempts,
        discardReason: ctx.reason,
        messageId: r.messageId,
        reason: r.reason,
        sha256: r.sha256,
        state: r.state,
      },
    }),
    batch,
  );
}
