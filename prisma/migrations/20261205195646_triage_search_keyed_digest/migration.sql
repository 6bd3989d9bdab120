-- AlterTable
ALTER TABLE "triage_letter_search" ADD COLUMN     "keyed_sha256" TEXT;

-- CreateTable
CREATE TABLE "triage_search_key" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "fingerprint" TEXT NOT NULL,

    CONSTRAINT "triage_search_key_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "triage_letter_search_keyed_sha256_idx" ON "triage_letter_search"("keyed_sha256");

-- Hand-written: a search by a payload digest as a masked role is shown it (`hmac:` and 64 hex
-- digits) found its letters by computing the keyed digest of every row of the DLQ (about 21 s at
-- 1,000,000 rows). The fill now writes each letter's keyed digest beside its search text, under
-- the key named by triage_search_key; the query reads its candidates there (lib/triage/queries.ts)
-- and still decides each match by computing the digest under the key in force.
--
-- No fingerprint row yet: the first fill lists every letter as pending, then writes the digests
-- (lib/triage/letter-search.ts). Until then a digest search tests every letter of its DLQ.
--
-- A letter whose payload changed is pending again, so its keyed digest is rewritten.
CREATE OR REPLACE FUNCTION triage_search_pending_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_search_pending AS p (id)
    SELECT nr.id FROM new_rows nr JOIN old_rows o ON o.id = nr.id
    WHERE nr.exception_class IS DISTINCT FROM o.exception_class
       OR nr.exception_message IS DISTINCT FROM o.exception_message
       OR nr.exception_search IS DISTINCT FROM o.exception_search
       OR nr.sha256 IS DISTINCT FROM o.sha256
    ON CONFLICT (id) DO UPDATE SET n = p.n + 1;
  RETURN NULL;
END $$;

-- The pending list is a queue: every letter written passes through it, and the fill deletes it
-- again. With the default thresholds (20% of the table) autovacuum let 2,000,000 dead rows stand
-- after a 1,000,000-letter fill, and every text or digest search read them all (seq scan of an
-- empty table: 130 ms, and a plan costed for two million rows). Vacuumed after every few thousand
-- changes instead, which keeps it a handful of pages.
ALTER TABLE "triage_search_pending" SET (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 5000,
  autovacuum_analyze_scale_factor = 0,
  autovacuum_analyze_threshold = 5000,
  autovacuum_vacuum_cost_delay = 0
);
