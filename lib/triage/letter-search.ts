import "server-only";
import { getDb } from "@/lib/db";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { keyedDigestFingerprint, keyedDigestPads, keyedDigestSql } from "@/lib/masking/digest";

/**
 * The text search table of the triage index (triage_letter_search), filled off the scan's path.
 *
 * A scan writes letters only; a statement trigger lists each new or changed letter in
 * triage_search_pending (migration *_triage_letter_search). A fill moves pending letters' search
 * text (triage_search_text: the class and the message as each role sees it) into
 * triage_letter_search, whose trigram index finds a text search's candidates. Text searches test
 * the pending letters directly (queries.ts), so a letter is found the moment it is written, filled
 * or not.
 *
 * The fill also writes each letter's payload digest as a masked role is shown it (the keyed digest,
 * lib/masking/digest.ts), under the key triage_search_key names. The key is derived from a server
 * secret that can rotate: a fill under a key other than the named one first lists every letter as
 * pending again and names its own key, in one transaction, so every digest written under the old
 * key is among a search's candidates until it is rewritten.
 */

/** Letters per fill statement. */
export const FILL_BATCH = 5000;

/**
 * One batch: deletes up to `batch` pending letters and writes their search text, in one statement.
 * A pending row whose counter changed after the batch was read (its letter changed again) stays
 * pending: the text written may be the older one, and the next fill writes the newer.
 * Returns how many letters left the pending list.
 */
export async function fillLetterSearchBatch(db: PrismaClient = getDb(), batch: number = FILL_BATCH): Promise<number> {
  await ensureSearchKey(db);
  const { ipad, opad } = keyedDigestPads();
  return db.$executeRawUnsafe(
    `WITH batch AS (SELECT id, n FROM triage_search_pending ORDER BY id LIMIT $1),
     done AS (DELETE FROM triage_search_pending p USING batch b WHERE p.id = b.id AND p.n = b.n RETURNING p.id)
     INSERT INTO triage_letter_search AS s (id, search_text, keyed_sha256)
       SELECT l.id, triage_search_text(l.exception_class, l.exception_message, l.exception_search),
         ${keyedDigestSql("l.sha256", "$2", "$3")}
       FROM done JOIN triage_letters l ON l.id = done.id
     ON CONFLICT (id) DO UPDATE SET search_text = EXCLUDED.search_text, keyed_sha256 = EXCLUDED.keyed_sha256`,
    Math.max(1, Math.trunc(batch)),
    ipad,
    opad,
  );
}

/**
 * Makes triage_search_key name this process's digest key before any digest is written under it.
 * Under another key (or none yet), every letter is listed as pending again in the same
 * transaction that renames the key: a search trusts the stored digests only under the named key,
 * and takes every pending letter as a candidate, so none is missed while they are rewritten.
 */
export async function ensureSearchKey(db: PrismaClient = getDb()): Promise<"current" | "renamed"> {
  const fingerprint = keyedDigestFingerprint();
  const rows = await db.$queryRawUnsafe<Array<{ fingerprint: string }>>(
    "SELECT fingerprint FROM triage_search_key WHERE id = 1",
  );
  if (rows[0]?.fingerprint === fingerprint) return "current";
  // One statement, so it is one transaction without a client-side time limit: listing ten
  // million letters takes minutes. The row's lock orders two fills that both found another key;
  // the second lists nothing (the key is already its own).
  await db.$executeRawUnsafe(
    `WITH renamed AS (
       INSERT INTO triage_search_key AS k (id, fingerprint) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint WHERE k.fingerprint <> EXCLUDED.fingerprint
       RETURNING 1
     )
     INSERT INTO triage_search_pending AS p (id) SELECT id FROM triage_letters WHERE EXISTS (SELECT 1 FROM renamed)
     ON CONFLICT (id) DO UPDATE SET n = p.n + 1`,
    fingerprint,
  );
  return "renamed";
}

/**
 * Fills batches until nothing is pending or `maxMs` has passed (the worker's task; tests).
 * Returns the letters whose search text was written.
 */
export async function fillLetterSearch(
  db: PrismaClient = getDb(),
  opts: { batch?: number; maxMs?: number } = {},
): Promise<number> {
  const batch = opts.batch ?? FILL_BATCH;
  const until = performance.now() + (opts.maxMs ?? 30_000);
  let total = 0;
  for (;;) {
    // A batch short of full drained the list (or left letters changed meanwhile for the next fill).
    const filled = await fillLetterSearchBatch(db, batch);
    total += filled;
    if (filled < batch || performance.now() >= until) return total;
  }
}
