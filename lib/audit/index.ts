import "server-only";
import { getDb } from "@/lib/db";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { AuditEvent } from "@/lib/generated/prisma/client";
import { AppError } from "@/lib/errors";
import { auditFields, insertChained } from "./batch";
import { auditHash, GENESIS_HASH } from "./hash";
import type { AuditEntry, AuditFilter, AuditOutcome, AuditRow } from "./types";

export { AUDIT_ACTIONS, auditActionLabel, type KnownAuditAction } from "./actions";
export { auditRowsToCsv, csvCell, AUDIT_CSV_COLUMNS } from "./csv";
export { GENESIS_HASH, auditHash } from "./hash";
export * from "./types";

/**
 * The audit log: append-only rows (a database trigger refuses UPDATE, DELETE and TRUNCATE), each
 * chained to the previous one by hash so that a change made around the trigger is detectable.
 *
 * Writers are serialised by a transaction-scoped advisory lock, so concurrent requests (and
 * replicas) never fork the chain: lock, read the last hash, insert, commit.
 */
const TX_OPTIONS = { maxWait: 15_000, timeout: 15_000 } as const;

function toRow(e: AuditEvent): AuditRow {
  return {
    id: e.id.toString(),
    operationId: e.operationId,
    scope: e.scope,
    at: e.at.toISOString(),
    actorId: e.actorId,
    actorEmail: e.actorEmail,
    actorRole: e.actorRole,
    action: e.action,
    outcome: e.outcome as AuditOutcome,
    connectionId: e.connectionId,
    queue: e.queue,
    target: e.target,
    requestId: e.requestId,
    ip: e.ip,
    details: (e.details as Record<string, unknown> | null) ?? null,
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

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
export async function recordAuditBatch(entries: AuditEntry[]): Promise<Array<{ id: string; operationId: string; hash: string }>> {
  if (entries.length === 0) return [];
  const at = new Date().toISOString();
  const rows = entries.map((e) => auditFields(e, at));
  return getDb().$transaction((tx) => insertChained(tx, rows), TX_OPTIONS);
}

function parseCursor(cursor: string | undefined): bigint | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d{1,19}$/.test(cursor)) throw new AppError("bad_request:audit", { userMessage: "The page cursor is not valid; start again from the first page." });
  return BigInt(cursor);
}

function whereOf(filter: AuditFilter): Prisma.AuditEventWhereInput {
  const where: Prisma.AuditEventWhereInput = {};
  if (filter.actor) where.actorEmail = { contains: filter.actor.trim(), mode: "insensitive" };
  if (filter.action) {
    const a = filter.action.trim();
    if (a.endsWith("*")) where.action = { startsWith: a.slice(0, -1) };
    else if (a.endsWith(".")) where.action = { startsWith: a };
    else where.action = a;
  }
  if (filter.queue) where.queue = filter.queue;
  if (filter.connectionId) where.connectionId = filter.connectionId;
  if (filter.outcome) where.outcome = filter.outcome;
  if (filter.from || filter.to) where.at = { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lte: filter.to } : {}) };
  return where;
}

/** Newest first, keyset paging on id: pass the previous page's `nextCursor` as `before`. */
export async function queryAudit(
  filter: AuditFilter,
  page: { before?: string; limit: number },
): Promise<{ rows: AuditRow[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(Math.trunc(page.limit) || 50, 1), 1000);
  const before = parseCursor(page.before);
  const where = whereOf(filter);
  if (before !== undefined) where.id = { lt: before };
  const found = await getDb().auditEvent.findMany({ where, orderBy: { id: "desc" }, take: limit + 1 });
  const rows = found.slice(0, limit).map(toRow);
  return { rows, nextCursor: found.length > limit ? rows[rows.length - 1].id : null };
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

export interface AuditChainResult {
  ok: boolean;
  checked: number;
  brokenAt?: { id: string; reason: string };
}

/**
 * Walks the whole log in id order, in batches, recomputing each row's hash and checking it links to
 * the previous row. Reports the first row where the chain breaks.
 */
export async function verifyAuditChain(batchSize = 1000): Promise<AuditChainResult> {
  const db = getDb();
  let expectedPrev = GENESIS_HASH;
  let after: bigint | undefined;
  let checked = 0;
  for (;;) {
    const batch = await db.auditEvent.findMany({
      where: after === undefined ? {} : { id: { gt: after } },
      orderBy: { id: "asc" },
      take: batchSize,
    });
    for (const e of batch) {
      const row = toRow(e);
      const { id: _id, hash: _hash, ...fields } = row;
      if (auditHash(fields) !== row.hash) {
        return { ok: false, checked, brokenAt: { id: row.id, reason: "the row's contents do not match its hash: it was changed after it was written" } };
      }
      if (row.prevHash !== expectedPrev) {
        return {
          ok: false,
          checked,
          brokenAt: { id: row.id, reason: "the row does not link to the row before it: an earlier row was changed, removed or inserted out of order" },
        };
      }
      expectedPrev = row.hash;
      checked++;
    }
    if (batch.length < batchSize) return { ok: true, checked };
    after = batch[batch.length - 1].id;
  }
}
