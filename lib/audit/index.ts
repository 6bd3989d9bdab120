import "server-only";
import { getDb } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { AppError } from "@/lib/errors";
import { auditFields, insertChained } from "./batch";
import { toRow } from "./row";
import type { AuditEntry, AuditFilter, AuditRow } from "./types";

export { AUDIT_ACTIONS, auditActionLabel, type KnownAuditAction } from "./actions";
export { auditRowsToCsv, csvCell, AUDIT_CSV_COLUMNS } from "./csv";
export { GENESIS_HASH, auditHash, auditMac } from "./hash";
export { verifyAuditChain, type AuditChainResult } from "./verify";
export { checkpointAuditChain } from "./checkpoint-task";
export * from "./types";

/**
 * The audit log: append-only rows (the console's role may only SELECT and INSERT, and a trigger
 * refuses UPDATE, DELETE and TRUNCATE even to the owner), each chained to the previous one by a MAC
 * under a key kept out of the database, with the chain's head checkpointed outside it
 * (checkpoints.ts), so a rewrite, a cut or an emptied table is detectable by verifyAuditChain.
 *
 * Writers are serialised by a transaction-scoped advisory lock, so concurrent requests (and
 * replicas) never fork the chain: lock, read the last hash, insert, commit.
 */
const TX_OPTIONS = { maxWait: 15_000, timeout: 15_000 } as const;

/**
 * Appends one row. Callers pass ids, counts and filters in `details`, never payload bytes or
 * secrets (strings over 2 KB are truncated as a backstop). Throws if the row cannot be written:
 * an action that must be audited should not proceed silently unaudited.
 */
export async function recordAudit(entry: AuditEntry): Promise<{ id: string; operationId: string; hash: string }> {
  const [row] = await recordAuditBatch([entry]);
  return row;
}

/**
 * Appends many rows in ONE transaction (one advisory lock, one multi-row INSERT), chained in the
 * order given, exactly as that many recordAudit calls would chain them. All or none are written.
 * Used for per-letter rows, where one transaction per row capped a redrive at ~260 letters/s.
 */
export async function recordAuditBatch(
  entries: AuditEntry[],
): Promise<Array<{ id: string; operationId: string; hash: string }>> {
  if (entries.length === 0) return [];
  const at = new Date().toISOString();
  const rows = entries.map((e) => auditFields(e, at));
  return getDb().$transaction((tx) => insertChained(tx, rows), TX_OPTIONS);
}

/**
 * Appends one row inside the caller's transaction (chained under the same lock), so the row commits
 * or rolls back with the change it records, and nothing that change sets off can be recorded first.
 */
export async function recordAuditIn(
  tx: Parameters<typeof insertChained>[0],
  entry: AuditEntry,
): Promise<{ id: string; operationId: string; hash: string }> {
  const [row] = await insertChained(tx, [auditFields(entry)]);
  return row;
}

/** Many rows inside the caller's transaction (recordAuditIn for a batch: one lock, one INSERT). */
export async function recordAuditBatchIn(
  tx: Parameters<typeof insertChained>[0],
  entries: AuditEntry[],
): Promise<Array<{ id: string; operationId: string; hash: string }>> {
  if (entries.length === 0) return [];
  const at = new Date().toISOString();
  return insertChained(
    tx,
    entries.map((e) => auditFields(e, at)),
  );
}

function parseCursor(cursor: string | undefined): bigint | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d{1,19}$/.test(cursor))
    throw new AppError("bad_request:audit", {
      userMessage: "The page cursor is not valid; start again from the first page.",
    });
  return BigInt(cursor);
}

/** AuditFilter.action: a prefix when it ends with "*" (dropped) or "." (kept), else the exact action. */
function actionMatch(action: string): { exact: string } | { prefix: string } {
  const a = action.trim();
  if (a.endsWith("*")) return { prefix: a.slice(0, -1) };
  if (a.endsWith(".")) return { prefix: a };
  return { exact: a };
}

function whereOf(filter: AuditFilter): Prisma.AuditEventWhereInput {
  const where: Prisma.AuditEventWhereInput = {};
  if (filter.actor) where.actorEmail = { contains: filter.actor.trim(), mode: "insensitive" };
  if (filter.action) {
    const a = actionMatch(filter.action);
    where.action = "prefix" in a ? { startsWith: a.prefix } : a.exact;
  }
  if (filter.queue) where.queue = filter.queue;
  if (filter.connectionId) where.connectionId = filter.connectionId;
  if (filter.outcome) where.outcome = filter.outcome;
  if (filter.from || filter.to)
    where.at = { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lte: filter.to } : {}) };
  return where;
}

/**
 * A time range that ends (`to`) more than `newerThan` rows before the log's newest and holds at
 * most `atMost` rows is read through the time indexes and its matches sorted by id; any other is
 * walked by id, newest first (it starts among the newest rows, or is too large to sort).
 */
export const TIME_INDEX_READ: Readonly<{ newerThan: number; atMost: number }> = { newerThan: 5_000, atMost: 100_000 };

/** Newest first, keyset paging on id: pass the previous page's `nextCursor` as `before`. `timeIndex`: for tests. */
export async function queryAudit(
  filter: AuditFilter,
  page: { before?: string; limit: number },
  timeIndex: typeof TIME_INDEX_READ = TIME_INDEX_READ,
): Promise<{ rows: AuditRow[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(Math.trunc(page.limit) || 50, 1), 1000);
  const before = parseCursor(page.before);
  const where = whereOf(filter);
  if (before !== undefined) where.id = { lt: before };
  if (filter.actions?.length === 0) return { rows: [], nextCursor: null };
  if (filter.to && (await readByTime(filter, timeIndex))) {
    where.id = { in: await newestInTimeRange(filter, before, limit + 1) };
  } else if (filter.actions) {
    where.id = { in: await newestIdsOf(filter, filter.actions, before, limit + 1) };
  }
  const found = await getDb().auditEvent.findMany({ where, orderBy: { id: "desc" }, take: limit + 1 });
  const rows = found.slice(0, limit).map(toRow);
  return { rows, nextCursor: found.length > limit ? rows[rows.length - 1].id : null };
}

/**
 * The ids of the newest `take` rows whose action is one of `actions`, matching the other filters:
 * one backward walk of the (action, id) index per action, merged. A single scan of the log for
 * "any of these actions" would read past every row of the others (letter views outnumber
 * everything else by far), and an IN list cannot be read from an index in id order.
 */
async function newestIdsOf(
  filter: AuditFilter,
  actions: string[],
  before: bigint | undefined,
  take: number,
): Promise<bigint[]> {
  const conds: Prisma.Sql[] = [Prisma.sql`a.action = x.action`, ...conditionsOf(filter, before)];
  const rows = await getDb().$queryRaw<Array<{ id: bigint }>>`
    SELECT l.id FROM unnest(${actions}::text[]) AS x(action)
    CROSS JOIN LATERAL (
      SELECT a.id FROM audit_log a WHERE ${Prisma.join(conds, " AND ")} ORDER BY a.id DESC LIMIT ${take}
    ) l
    ORDER BY l.id DESC LIMIT ${take}`;
  return rows.map((r) => BigInt(r.id));
}

/**
 * The filter (and the cursor) as SQL conditions on `audit_log a`, as whereOf reads it, all but
 * `actions`: each caller matches that list its own way.
 */
function conditionsOf(filter: AuditFilter, before: bigint | undefined): Prisma.Sql[] {
  const conds: Prisma.Sql[] = [];
  if (before !== undefined) conds.push(Prisma.sql`a.id < ${before}`);
  if (filter.actor) conds.push(Prisma.sql`a.actor_email ILIKE ${`%${likeEscaped(filter.actor.trim())}%`}`);
  if (filter.action) {
    const a = actionMatch(filter.action);
    conds.push(
      "prefix" in a ? Prisma.sql`a.action LIKE ${`${likeEscaped(a.prefix)}%`}` : Prisma.sql`a.action = ${a.exact}`,
    );
  }
  if (filter.queue) conds.push(Prisma.sql`a.queue = ${filter.queue}`);
  if (filter.connectionId) conds.push(Prisma.sql`a.connection_id = ${filter.connectionId}`);
  if (filter.outcome) conds.push(Prisma.sql`a.outcome = ${filter.outcome}`);
  if (filter.from) conds.push(Prisma.sql`a.at >= ${filter.from}`);
  if (filter.to) conds.push(Prisma.sql`a.at <= ${filter.to}`);
  return conds;
}

/**
 * Is the time range (up to `to`, from `from` or the first row) best read through the time indexes
 * (TIME_INDEX_READ)? Both counts come from the `(at)` index alone, never past their bound.
 */
async function readByTime(filter: AuditFilter, { newerThan, atMost }: typeof TIME_INDEX_READ): Promise<boolean> {
  const [{ newer }] = await getDb().$queryRaw<Array<{ newer: number }>>`
    SELECT count(*)::int AS newer FROM (SELECT 1 FROM audit_log WHERE at > ${filter.to} LIMIT ${newerThan + 1}) s`;
  if (newer <= newerThan) return false;
  const [{ n }] = await getDb().$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM audit_log WHERE at <= ${filter.to} ${filter.from ? Prisma.sql`AND at >= ${filter.from}` : Prisma.empty}
      LIMIT ${atMost + 1}) s`;
  return n <= atMost;
}

/**
 * The newest `take` ids matching the filter within a time range that ends, read through the time
 * indexes and sorted by id (top-N). Walking the primary key newest first instead (the planner's
 * choice for ORDER BY id, expecting the range's rows spread among the ids) reads every row after
 * the range first: 280 ms for an old day of a 1,000,000-row log, against 7 ms this way (the id
 * sorted as `id + 0`, which the primary key cannot serve). Exact whatever order `at` and id are in.
 */
async function newestInTimeRange(filter: AuditFilter, before: bigint | undefined, take: number): Promise<bigint[]> {
  const conds = conditionsOf(filter, before);
  if (filter.actions) conds.push(Prisma.sql`a.action = ANY(${filter.actions}::text[])`);
  const rows = await getDb().$queryRaw<Array<{ id: bigint }>>`
    SELECT a.id FROM audit_log a WHERE ${Prisma.join(conds, " AND ")} ORDER BY a.id + 0 DESC LIMIT ${take}`;
  return rows.map((r) => BigInt(r.id));
}

function likeEscaped(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Every action the log holds, from the (action, id) index: one probe per distinct action rather
 * than a scan of the log.
 */
export async function distinctAuditActions(): Promise<string[]> {
  const rows = await getDb().$queryRaw<Array<{ action: string }>>`
    WITH RECURSIVE a AS (
      (SELECT action FROM audit_log ORDER BY action LIMIT 1)
      UNION ALL
      SELECT (SELECT action FROM audit_log WHERE action > a.action ORDER BY action LIMIT 1) FROM a WHERE a.action IS NOT NULL
    )
    SELECT action FROM a WHERE action IS NOT NULL`;
  return rows.map((r) => r.action);
}

/** Every matching row, newest first, fetched in keyset batches: memory stays bounded for exports. */
export async function* streamAudit(filter: AuditFilter, batchSize = 500): AsyncGenerator<AuditRow> {
  let before: string | undefined;
  for (;;) {
    const page = await queryAudit(filter, { before, limit: batchSize });
    yield* page.rows;
    if (!page.nextCursor) return;
    before = page.nextCursor;
  }
}
