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
