-- The redrive ledger's outcome becomes a HOT update, like the claim (migration redrive_claim_hot).
-- Generated from the schema, then completed by hand (the backfill and the fillfactor).
--
-- The outcome sets moved_at, and (job_id, moved_at) was indexed for the breaker's window
-- (breakerWindow): every outcome version was a non-HOT update, writing a new entry in each of the
-- table's five indexes. The window now reads redrive_moves: one row per outcome write that moved
-- letters (their seqs and the moved_at they were given), so no index of redrive_letters names a
-- column the outcome changes.
--
-- fillfactor 25 (was 50): a row gets two new versions per attempt, the claim's and the outcome's
-- (larger: it adds the destination, or a reason). At 50 the page has room for the claim's only, and
-- the outcome's fits only once the page is pruned of the version the claim replaced, which any
-- older snapshot on the server prevents (a snapshot's xmin is the oldest transaction running in
-- any database). Measured with other sessions' bulk loads running, 20,000 letters in batches of
-- 2,000: at 50, 1 outcome in 30 was HOT; at 33, 73-95% (by the destination's length); at 25, all.
-- The heap is larger while the ledger is new, but no outcome version lands on another page and
-- none adds index entries (at 50 each one added five).

-- DropIndex
DROP INDEX "redrive_letters_job_id_moved_at_idx";

-- CreateTable
CREATE TABLE "redrive_moves" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "moved_at" TIMESTAMPTZ(3) NOT NULL,
    "moved" INTEGER NOT NULL,
    "seqs" INTEGER[],

    CONSTRAINT "redrive_moves_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "redrive_moves_job_id_moved_at_idx" ON "redrive_moves"("job_id", "moved_at");

-- The moves recorded before this migration (letters moved by jobs that may still be running or be
-- resumed), one row per job and moved_at, as the outcome writes them from now on.
INSERT INTO "redrive_moves" ("job_id", "moved_at", "moved", "seqs")
SELECT "job_id", "moved_at", count(*)::int, array_agg("seq" ORDER BY "seq")
FROM "redrive_letters"
WHERE "moved_at" IS NOT NULL AND "state" IN ('moved', 'returned')
GROUP BY "job_id", "moved_at"
ORDER BY "job_id", "moved_at";

ALTER TABLE "redrive_letters" SET (fillfactor = 25);
