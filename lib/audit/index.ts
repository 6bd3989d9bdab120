import "server-only";
import { randomUUID } from "node:crypto";
import { getDb } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import type { AuditEvent } from "@/lib/generated/prisma/client";
import { AppError } from "@/lib/errors";
import { auditHash, GENESIS_HASH, normaliseDetails } from "./hash";
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
const AUDIT_CHAIN_LOCK = 7_305_419_862_137n; // arbitrary constant, unique to the audit chain
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
  const details = normaliseDetails(entry.details);
  const base = {
    operationId: entry.operationId ?? randomUUID(),
    scope: entry.scope ?? "operation",
    // Set here, at millisecond precision (the column is timestamptz(3)), so verification can
    // recompute the hash from what is stored.
    at: new Date().toISOString(),
    actorId: entry.actor.id ?? null,
    actorEmail: entry.actor.email?.toLowerCase() ?? null,
    actorRole: entry.actor.role ?? null,
    action: entry.action,
    outcome: entry.outcome,
    connectionId: entry.connectionId ?? null,
    queue: entry.queue ?? null,
    target: entry.target ?? null,
    requestId: entry.requestId ?? null,
    ip: entry.ip ?? null,
    details,
  };
  const db = getDb();
  return db.$transaction(async (tx) => {
    await tx.$queryRawUnsafe(`SELECT 1 AS locked FROM pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`);
    const last = await tx.auditEvent.findFirst({ orderBy: { id: "desc" }, select: { hash: true } });
    const prevHash = last?.hash ?? GENESIS_HASH;
    const hash = auditHash({ ...base, prevHash });
    const created = await tx.auditEvent.create({
      data: { ...base, at: new Date(base.at), details: details === null ? Prisma.DbNull : (details as Prisma.InputJsonObject), prevHash, hash },
      select: { id: true },
    });
    return { id: created.id.toString(), operationId: base.operationId, hash };
  }, TX_OPTIONS);
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
