-- Hand-written (Prisma's schema cannot say WHERE or fillfactor): the redrive ledger's claim becomes
-- a HOT update, and each letter's outcome version adds fewer index entries.
--
-- A letter's row is written twice by a run: the claim (state 'moving', attempts + 1, stage,
-- updated_at; the replay id only when the row has none) and the outcome (state, moved_at,
-- destination, reason, ...). An UPDATE is HOT (no new index entry, the new version on the same
-- page) only when it changes no column that any index names, in its key or in its WHERE.
--  * (job_id, state, seq) named state, which both writes change. No query needs it: the claim and
--    every per-job read go by (job_id, seq) (the claim's plan already did: the pending letters are
--    the ones after those already moved, in seq order), the per-state counts read the job's rows.
--    Dropped.
--  * replay_id was set by the first claim. populateLedger now gives each row its replay id when it
--    is written (the id the claim would have given it, kept for every attempt as before), so the
--    claim changes it no more. Rows written before this keep getting theirs at their first claim.
--  * (job_id, audited): only rows owing an audit row are looked for (flushOwedAudit: audited =
--    false). Partial: no entry for the rows that owe none, which is nearly every version.
--  * (job_id, moved_at): its one reader (breakerWindow) asks for moved_at IS NOT NULL. Partial:
--    no entry for a claimed or pending version.
-- fillfactor 50 leaves room on each page for the claim's new version (HOT needs it on the same page).
-- Same names as the schema's @@index([jobId, audited]) and @@index([jobId, movedAt]).
DROP INDEX "redrive_letters_job_id_state_seq_idx";
DROP INDEX "redrive_letters_job_id_audited_idx";
CREATE INDEX "redrive_letters_job_id_audited_idx" ON "redrive_letters" ("job_id", "audited") WHERE NOT "audited";
DROP INDEX "redrive_letters_job_id_moved_at_idx";
CREATE INDEX "redrive_letters_job_id_moved_at_idx" ON "redrive_letters" ("job_id", "moved_at") WHERE "moved_at" IS NOT NULL;
ALTER TABLE "redrive_letters" SET (fillfactor = 50);
