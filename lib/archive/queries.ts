import "server-only";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { keyedDigestPads, keyedDigestQuery, keyedDigestSql } from "@/lib/masking/digest";

/** Reads of the archive: keyset pages on (discarded_at, id), newest first, never OFFSET. */

export interface ArchiveFilter {
  connectionId?: string;
  queue?: string;
  /** Inclusive bounds on the discard time. */
  from?: Date;
  to?: Date;
  /** Who discarded (email, case-insensitive substring). */
  actor?: string;
  /** The stated discard reason (case-insensitive substring). */
  reason?: string;
  /** "archived" (not restored) | "restored" */
  state?: "archived" | "restored";
  /** Exact letter id, message id or SHA-256, or a substring of the exception class. */
  text?: string;
  /** The discard job or repair operation that archived them (discard_job_id; a UUID, checked by the caller). */
  operation?: string;
  /** Only these rows (export of a hand-picked set). */
  ids?: string[];
  /**
   * Which digest `text` may match exactly: the SHA-256 only for a role that sees every payload's
   * bytes, else only the keyed digest it is shown (lib/masking/digest.ts). Set by the use case.
   */
  digest?: "raw" | "keyed";
}

export interface ArchivedSummary {
  id: string;
  connectionId: string;
  queue: string;
  letterId: string;
  messageId: string | null;
  discardJobId: string;
  discardedAt: string;
  discardedBy: string | null;
  discardReason: string;
  sha256: string;
  bodySize: number;
  contentType: string | null;
  exceptionClass: string | null;
  failureReason: string | null;
  originQueue: string | null;
  deadLetteredAt: string | null;
  expiresAt: string;
  restoreState: string | null;
  restoredAt: string | null;
  restoredBy: string | null;
  restoreReason: string | null;
  restoreError: string | null;
}

type Row = Record<string, unknown>;
const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());
export const SUMMARY_COLUMNS = `id::text AS id, connection_id, queue, letter_id, message_id, discard_job_id::text AS discard_job_id, discarded_at, discarded_by_email,
  discard_reason, sha256, body_size, content_type, exception_class, failure_reason, origin_queue, dead_lettered_at, expires_at, restore_state,
  restored_at, restored_by_email, restore_reason, restore_error`;

export function toSummary(r: Row): ArchivedSummary {
  return {
    id: r.id as string,
    connectionId: r.connection_id as string,
    queue: r.queue as string,
    letterId: r.letter_id as string,
    messageId: (r.message_id as string) ?? null,
    discardJobId: r.discard_job_id as string,
    discardedAt: iso(r.discarded_at)!,
    discardedBy: (r.discarded_by_email as string) ?? null,
    discardReason: r.discard_reason as string,
    sha256: r.sha256 as string,
    bodySize: Number(r.body_size),
    contentType: (r.content_type as string) ?? null,
    exceptionClass: (r.exception_class as string) ?? null,
    failureReason: (r.failure_reason as string) ?? null,
    originQueue: (r.origin_queue as string) ?? null,
    deadLetteredAt: iso(r.dead_lettered_at),
    expiresAt: iso(r.expires_at)!,
    restoreState: (r.restore_state as string) ?? null,
    restoredAt: iso(r.restored_at),
    restoredBy: (r.restored_by_email as string) ?? null,
    restoreReason: (r.restore_reason as string) ?? null,
    restoreError: (r.restore_error as string) ?? null,
  };
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function archiveWhere(f: ArchiveFilter): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts: string[] = ["true"];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    parts.push(clause(`$${params.length}`));
  };
  if (f.connectionId) add((p) => `connection_id = ${p}`, f.connectionId);
  if (f.queue) add((p) => `queue = ${p}`, f.queue);
  if (f.from) add((p) => `discarded_at >= ${p}::timestamptz`, f.from.toISOString());
  if (f.to) add((p) => `discarded_at <= ${p}::timestamptz`, f.to.toISOString());
  if (f.actor?.trim()) add((p) => `discarded_by_email ILIKE ${p}`, `%${likeEscape(f.actor.trim().toLowerCase())}%`);
  if (f.reason?.trim()) add((p) => `discard_reason ILIKE ${p}`, `%${likeEscape(f.reason.trim())}%`);
  if (f.state === "restored") parts.push(`restore_state = 'restored'`);
  if (f.state === "archived") parts.push(`restore_state IS DISTINCT FROM 'restored'`);
  // Served by the unique index on (discard_job_id, letter_id), whose leading column this is.
  if (f.operation) {
    if (!UUID.test(f.operation))
      throw new AppError("bad_request:filter", {
        userMessage: "The operation filter is not an operation id (a UUID).",
      });
    add((p) => `discard_job_id = ${p}::uuid`, f.operation);
  }
  if (f.ids)
    add(
      (p) => `id = ANY(${p}::uuid[])`,
      f.ids.filter((id) => UUID.test(id)),
    );
  if (f.text?.trim()) {
    const t = f.text.trim();
    params.push(`%${likeEscape(t)}%`, t);
    const like = `$${params.length - 1}`;
    const exact = `$${params.length}`;
    let digest = "";
    if (f.digest === "raw") digest = ` OR sha256 = lower(${exact})`;
    else if (keyedDigestQuery(t)) {
      const { ipad, opad } = keyedDigestPads();
      params.push(ipad, opad, keyedDigestQuery(t));
      digest = ` OR ${keyedDigestSql("sha256", `$${params.length - 2}`, `$${params.length - 1}`)} = $${params.length}`;
    }
    parts.push(`(exception_class ILIKE ${like} OR letter_id = ${exact} OR message_id = ${exact}${digest})`);
  }
  return { sql: parts.join(" AND "), params };
}

function encodeCursor(at: string, id: string) {
  return Buffer.from(JSON.stringify([at, id])).toString("base64url");
}
function decodeCursor(s: string | null | undefined): { at: string; id: string } | null {
  if (!s) return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(s, "base64url").toString("utf8")) as [string, string];
    if (Number.isNaN(Date.parse(at)) || !UUID.test(id)) throw new Error("shape");
    return { at, id };
  } catch {
    throw new AppError("bad_request:cursor", {
      userMessage: "The page cursor is not valid; start again from the first page.",
    });
  }
}

export async function queryArchive(
  filter: ArchiveFilter,
  page: { after?: string | null; limit?: number },
  db: PrismaClient = getDb(),
): Promise<{ rows: ArchivedSummary[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(Math.trunc(page.limit ?? 50) || 50, 1), 1000);
  const w = archiveWhere(filter);
  const params = [...w.params];
  let sql = w.sql;
  const c = decodeCursor(page.after);
  if (c) {
    params.push(c.at, c.id);
    sql += ` AND (discarded_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
  }
  params.push(limit + 1);
  const found = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${SUMMARY_COLUMNS} FROM archived_letters WHERE ${sql} ORDER BY discarded_at DESC, id DESC LIMIT $${params.length}`,
    ...params,
  );
  const rows = found.slice(0, limit).map(toSummary);
  const last = found.length > limit ? rows[rows.length - 1] : null;
  return { rows, nextCursor: last ? encodeCursor(last.discardedAt, last.id) : null };
}

export async function countArchive(filter: ArchiveFilter, db: PrismaClient = getDb()): Promise<number> {
  const w = archiveWhere(filter);
  const r = await db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM archived_letters WHERE ${w.sql}`,
    ...w.params,
  );
  return Number(r[0]?.n ?? 0);
}

/** A DLQ the archive holds letters of, with how many (every state). */
export interface ArchiveDlq {
  connectionId: string;
  queue: string;
  count: number;
}

/**
 * Every DLQ the archive holds letters of, with its count, for the archive's connection and DLQ
 * lists: one pass over the (connection, queue, discarded at, id) index, not the table. The archive
 * is bounded by its retention, so the pass is too.
 */
export async function archiveDlqs(db: PrismaClient = getDb()): Promise<ArchiveDlq[]> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string; n: number }>>(
    `SELECT connection_id, queue, count(*)::int AS n FROM archived_letters GROUP BY connection_id, queue ORDER BY connection_id, queue`,
  );
  return rows.map((r) => ({ connectionId: r.connection_id, queue: r.queue, count: Number(r.n) }));
}

export interface ArchivedFull extends ArchivedSummary {
  metadata: Record<string, unknown>;
  discardJobId: string;
  payloadCiphertext: Uint8Array;
  payloadKeyId: string;
  envelopeCiphertext: Uint8Array;
  envelopeKeyId: string;
}

const FULL_COLUMNS = `${SUMMARY_COLUMNS}, metadata, payload_ciphertext, payload_key_id, envelope_ciphertext, envelope_key_id`;

function toFull(r: Row): ArchivedFull {
  return {
    ...toSummary(r),
    metadata: (typeof r.metadata === "string" ? JSON.parse(r.metadata) : r.metadata) as Record<string, unknown>,
    payloadCiphertext: r.payload_ciphertext as Uint8Array,
    payloadKeyId: r.payload_key_id as string,
    envelopeCiphertext: r.envelope_ciphertext as Uint8Array,
    envelopeKeyId: r.envelope_key_id as string,
  };
}

export async function getArchived(id: string, db: PrismaClient = getDb()): Promise<ArchivedFull | null> {
  return (await getArchivedMany([id], db)).get(id) ?? null;
}

/** Several archived letters, sealed parts included, in one query (ids that are not uuids or not there are absent). */
export async function getArchivedMany(ids: string[], db: PrismaClient = getDb()): Promise<Map<string, ArchivedFull>> {
  const valid = ids.filter((id) => UUID.test(id));
  if (valid.length === 0) return new Map();
  const rows = await db.$queryRawUnsafe<Row[]>(
    `SELECT ${FULL_COLUMNS} FROM archived_letters WHERE id = ANY($1::uuid[])`,
    valid,
  );
  return new Map(rows.map((r) => [String(r.id), toFull(r)]));
}

/** Every row of the filter in keyset batches (bounded memory), with the sealed payload when asked. */
export async function* streamArchive(
  filter: ArchiveFilter,
  opts: { withSealed: boolean; batchSize?: number },
  db: PrismaClient = getDb(),
): AsyncGenerator<
  ArchivedSummary & { metadata: Record<string, unknown>; payloadCiphertext?: Uint8Array; payloadKeyId?: string }
> {
  const w = archiveWhere(filter);
  const size = opts.batchSize ?? 200;
  let cursor: { at: string; id: string } | null = null;
  for (;;) {
    const params = [...w.params];
    let sql = w.sql;
    if (cursor) {
      params.push(cursor.at, cursor.id);
      sql += ` AND (discarded_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    params.push(size);
    const cols = `${SUMMARY_COLUMNS}, metadata${opts.withSealed ? ", payload_ciphertext, payload_key_id" : ""}`;
    const rows = await db.$queryRawUnsafe<Row[]>(
      `SELECT ${cols} FROM archived_letters WHERE ${sql} ORDER BY discarded_at DESC, id DESC LIMIT $${params.length}`,
      ...params,
    );
    for (const r of rows) {
      yield {
        ...toSummary(r),
        metadata: (typeof r.metadata === "string" ? JSON.parse(r.metadata) : r.metadata) as Record<string, unknown>,
        ...(opts.withSealed
          ? { payloadCiphertext: r.payload_ciphertext as Uint8Array, payloadKeyId: r.payload_key_id as string }
          : {}),
      };
    }
    if (rows.length < size) return;
    const last = toSummary(rows[rows.length - 1]);
    cursor = { at: last.discardedAt, id: last.id };
  }
}
