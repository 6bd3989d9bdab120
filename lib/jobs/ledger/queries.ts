import "server-only";
import { recordAuditBatch } from "@/lib/audit";
import type { AuditEntry } from "@/lib/audit/types";
import type { PrismaClient } from "@/lib/generated/prisma/client";

export type LedgerDb = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;
type Row = Record<string, unknown>;

/**
 * A per-letter ledger table (`redrive_letters`, `discard_letters`): one row per letter under its
 * job, in triage index order (`seq`), a `state`, and `audited = false` while the letter's audit row
 * is owed. Each feature names its table, its columns, how a row reads, and the states that are not
 * yet an outcome (no audit row is owed for those).
 */
export interface LedgerTable<R> {
  table: string;
  /** The SELECT list a row is read with (`toRow` reads it). */
  cols: string;
  toRow: (r: Row) => R;
  /** States that are not an outcome yet (pending, in flight). */
  unsettled: readonly string[];
}

/** Rows per state, one indexed GROUP BY; `extra` adds aggregate columns to each state's row. */
export function countRowsByState(db: LedgerDb, table: string, jobId: string, extra = ""): Promise<Row[]> {
  return db.$queryRawUnsafe<Row[]>(
    `SELECT state, count(*)::int AS n${extra} FROM ${table} WHERE job_id = $1::uuid GROUP BY state`,
    jobId,
  );
}

/** A count for every state, zero where the ledger has none. */
export async function countByState<S extends string>(
  db: LedgerDb,
  table: string,
  jobId: string,
  states: readonly S[],
): Promise<Record<S, number>> {
  const out = Object.fromEntries(states.map((s) => [s, 0])) as Record<S, number>;
  for (const r of await countRowsByState(db, table, jobId)) out[r.state as S] = Number(r.n);
  return out;
}

/** A keyset page of the ledger in index order, optionally one state (1 to 1000 rows, 100 by default). */
export async function ledgerPageOf<R extends { seq: number }>(
  db: LedgerDb,
  t: LedgerTable<R>,
  jobId: string,
  opts: { afterSeq?: number; limit?: number; state?: string },
): Promise<{ rows: R[]; nextSeq: number | null }> {
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 100) || 100, 1), 1000);
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${t.cols} FROM ${t.table} WHERE job_id = $1::uuid AND seq > $2 AND ($3::text IS NULL OR state = $3) ORDER BY seq LIMIT $4`,
    jobId,
    opts.afterSeq ?? 0,
    opts.state ?? null,
    limit + 1,
  );
  const page = rows.slice(0, limit).map(t.toRow);
  return { rows: page, nextSeq: rows.length > limit ? page[page.length - 1].seq : null };
}

/**
 * Writes the audit rows owed for settled letters (one per letter outcome, scope "letter",
 * operation id = job id), in keyset batches, then marks them written. A run that died between the
 * ledger write and the audit writes owes them still; the next run writes them first. One
 * transaction for a batch's audit rows (one lock, one INSERT), then the rows are marked: a crash
 * between the two writes them again on resume, a duplicate audit row, never a gap.
 */
export async function flushOwedAudit<R extends { id: string }>(
  db: LedgerDb,
  t: LedgerTable<R>,
  jobId: string,
  entryOf: (r: R) => AuditEntry,
  batch = 1000,
): Promise<number> {
  const unsettled = t.unsettled.map((s) => `'${s}'`).join(", ");
  let written = 0;
  for (;;) {
    const rows = (
      await db.$queryRawUnsafe<Row[]>(
        `SELECT ${t.cols} FROM ${t.table} WHERE job_id = $1::uuid AND audited = false AND state NOT IN (${unsettled}) ORDER BY seq LIMIT $2`,
        jobId,
        batch,
      )
    ).map(t.toRow);
    if (rows.length === 0) return written;
    await recordAuditBatch(rows.map(entryOf));
    await db.$executeRawUnsafe(
      `UPDATE ${t.table} SET audited = true WHERE id = ANY($1::bigint[])`,
      rows.map((r) => r.id),
    );
    written += rows.length;
  }
}
