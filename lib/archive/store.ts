import "server-only";
import { createHash } from "node:crypto";
import type { LetterCopy } from "@/lib/brokers/contract/letter";
import { decryptPayload, encryptPayload } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * The archive of discarded letters (`archived_letters`). A row is written, and committed, before
 * the broker removes its letter; payload and re-publish envelope are kept only as AES-256-GCM
 * ciphertext under the index keyring (lib/crypto/payload-cipher.ts), each bound by its AAD to the
 * row's DLQ, letter and discard, so a ciphertext copied to another row fails to decrypt.
 */

type Db = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

/** DLQ_ARCHIVE_RETENTION_DAYS (default 30; 0 keeps rows until the next sweep). */
export function archiveRetentionDays(env: Record<string, string | undefined> = process.env): number {
  const n = Number.parseFloat(env.DLQ_ARCHIVE_RETENTION_DAYS ?? "");
  return Number.isFinite(n) && n >= 0 ? n : 30;
}

export function archiveAad(
  row: { connectionId: string; queue: string; letterId: string; discardJobId: string },
  part: "payload" | "envelope",
): string {
  return JSON.stringify(["archive", part, row.connectionId, row.queue, row.letterId, row.discardJobId]);
}

export interface ArchiveContext {
  jobId: string;
  connectionId: string;
  queue: string;
  reason: string;
  actor: { id: string | null; email: string | null; role: string | null };
}

/**
 * Writes (or, on a resumed run, rewrites) the archive row of one letter and returns its id. Refuses
 * a copy whose body is not whole or does not match its checksum: the letter then stays in the DLQ.
 * Resolves only after the INSERT committed (one statement, autocommit).
 */
export async function writeArchive(
  db: Db,
  ctx: ArchiveContext,
  copy: LetterCopy,
  retentionDays = archiveRetentionDays(),
): Promise<string> {
  const l = copy.letter;
  const sha = createHash("sha256").update(l.body).digest("hex");
  if (l.bodyTruncated || l.body.length !== l.bodySize || sha !== l.sha256) {
    throw new AppError("internal:archive-copy", {
      userMessage:
        "The copy of this letter was incomplete or did not match its checksum, so it was not archived; it stays in the DLQ.",
    });
  }
  const key = { connectionId: ctx.connectionId, queue: ctx.queue, letterId: copy.letterId, discardJobId: ctx.jobId };
  const payload = encryptPayload(l.body, archiveAad(key, "payload"));
  const envelope = encryptPayload(copy.envelope, archiveAad(key, "envelope"));
  const metadata = {
    correlationId: l.correlationId,
    contentEncoding: l.contentEncoding,
    orderingKey: l.orderingKey,
    position: l.position,
    headers: l.headers,
    properties: l.properties,
    failure: l.failure,
    history: l.history,
  };
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `INSERT INTO archived_letters (id, connection_id, queue, letter_id, message_id, discard_job_id, discarded_at, discarded_by_id, discarded_by_email,
       discarded_by_role, discard_reason, sha256, body_size, content_type, exception_class, failure_reason, origin_queue, dead_lettered_at, metadata,
       payload_ciphertext, payload_key_id, envelope_ciphertext, envelope_key_id, expires_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5::uuid, now(), $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::timestamptz, $17::jsonb,
       $18, $19, $20, $21, now() + ($22::float8 * interval '1 day'))
     ON CONFLICT (discard_job_id, letter_id) DO UPDATE SET
       payload_ciphertext = EXCLUDED.payload_ciphertext, payload_key_id = EXCLUDED.payload_key_id,
       envelope_ciphertext = EXCLUDED.envelope_ciphertext, envelope_key_id = EXCLUDED.envelope_key_id,
       metadata = EXCLUDED.metadata, sha256 = EXCLUDED.sha256, body_size = EXCLUDED.body_size
     RETURNING id::text AS id`,
    ctx.connectionId,
    ctx.queue,
    copy.letterId,
    l.messageId,
    ctx.jobId,
    ctx.actor.id,
    ctx.actor.email,
    ctx.actor.role,
    ctx.reason,
    l.sha256,
    l.bodySize,
    l.contentType,
    l.failure.exceptionClass,
    l.failure.reason,
    l.failure.originQueue,
    l.failure.deadLetteredAt,
    JSON.stringify(metadata),
    Buffer.from(payload.data),
    payload.keyId,
    Buffer.from(envelope.data),
    envelope.keyId,
    retentionDays,
  );
  return rows[0].id;
}

/** The archive ids of these letters in this discard (letters archived in an earlier attempt). */
export async function archivedIds(db: Db, jobId: string, letterIds: string[]): Promise<Map<string, string>> {
  if (letterIds.length === 0) return new Map();
  const rows = await db.$queryRawUnsafe<Array<{ id: string; letter_id: string }>>(
    `SELECT id::text AS id, letter_id FROM archived_letters WHERE discard_job_id = $1::uuid AND letter_id = ANY($2::text[])`,
    jobId,
    letterIds,
  );
  return new Map(rows.map((r) => [r.letter_id, r.id]));
}

export interface SealedArchiveRow {
  connectionId: string;
  queue: string;
  letterId: string;
  discardJobId: string;
  payloadCiphertext: Uint8Array;
  payloadKeyId: string;
  envelopeCiphertext?: Uint8Array;
  envelopeKeyId?: string;
}

export function openPayload(r: SealedArchiveRow): Buffer {
  return decryptPayload({ keyId: r.payloadKeyId, data: Buffer.from(r.payloadCiphertext) }, archiveAad(r, "payload"));
}

export function openEnvelope(r: SealedArchiveRow): Buffer {
  if (!r.envelopeCiphertext || !r.envelopeKeyId)
    throw new AppError("internal:archive", { userMessage: "This archived letter has no re-publish envelope." });
  return decryptPayload({ keyId: r.envelopeKeyId, data: Buffer.from(r.envelopeCiphertext) }, archiveAad(r, "envelope"));
}

/** Deletes archive rows past their expiry (a restore in progress keeps its row). Returns how many. */
export async function deleteExpiredArchive(
  db: Db = getDb(),
): Promise<{ count: number; byDlq: Array<{ connectionId: string; queue: string; n: number }> }> {
  const rows = await db.$queryRawUnsafe<Array<{ connection_id: string; queue: string; n: number }>>(
    `WITH gone AS (
       DELETE FROM archived_letters WHERE expires_at < now() AND (restore_state IS DISTINCT FROM 'restoring')
       RETURNING connection_id, queue)
     SELECT connection_id, queue, count(*)::int AS n FROM gone GROUP BY connection_id, queue ORDER BY connection_id, queue`,
  );
  const byDlq = rows.map((r) => ({ connectionId: r.connection_id, queue: r.queue, n: Number(r.n) }));
  return { count: byDlq.reduce((s, r) => s + r.n, 0), byDlq };
}
