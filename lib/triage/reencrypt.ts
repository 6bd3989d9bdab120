import "server-only";
import { decryptPayload, encryptPayload, keyring, payloadAad, type Keyring } from "@/lib/crypto/payload-cipher";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";

/**
 * After a key rotation: re-encrypts every index payload not under the current key id, in id-ordered
 * batches (bounded memory, resumable: run it again after an interruption). Afterwards the old key
 * can be removed from DLQ_INDEX_KEYS. Returns how many payloads were rewritten.
 */
export async function reencryptIndex(
  opts: {
    batchSize?: number;
    ring?: Keyring;
    db?: PrismaClient;
    log?: (n: number) => void;
    connectionId?: string;
  } = {},
): Promise<number> {
  const ring = opts.ring ?? keyring();
  const db = opts.db ?? getDb();
  const batch = opts.batchSize ?? 500;
  let after = 0n;
  let total = 0;
  for (;;) {
    const rows = await db.$queryRawUnsafe<
      Array<{
        id: bigint;
        connection_id: string;
        queue: string;
        letter_id: string;
        payload_key_id: string;
        payload_ciphertext: Uint8Array;
      }>
    >(
      `SELECT id, connection_id, queue, letter_id, payload_key_id, payload_ciphertext FROM triage_letters
       WHERE id > $1::bigint AND payload_ciphertext IS NOT NULL AND payload_key_id <> $2 AND ($4::text IS NULL OR connection_id = $4)
       ORDER BY id LIMIT $3`,
      after.toString(),
      ring.currentId,
      batch,
      opts.connectionId ?? null,
    );
    if (rows.length === 0) return total;
    const updates = rows.map((r) => {
      const aad = payloadAad(r.connection_id, r.queue, r.letter_id);
      const plain = decryptPayload({ keyId: r.payload_key_id, data: Buffer.from(r.payload_ciphertext) }, aad, ring);
      const sealed = encryptPayload(plain, aad, ring);
      return { id: r.id.toString(), old: r.payload_key_id, key: sealed.keyId, data: sealed.data.toString("base64") };
    });
    // Only rows still under the key that was read: a scan that rewrote a row meanwhile wins.
    await db.$executeRawUnsafe(
      `UPDATE triage_letters t SET payload_ciphertext = decode(u.data, 'base64'), payload_key_id = u.key
       FROM json_to_recordset($1::json) AS u(id bigint, old text, key text, data text)
       WHERE t.id = u.id AND t.payload_key_id = u.old`,
      JSON.stringify(updates),
    );
    total += rows.length;
    opts.log?.(total);
    after = rows[rows.length - 1].id;
  }
}
