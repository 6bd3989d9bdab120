-- Hand-written (Prisma's schema cannot say WHERE): the gone_at index holds only the letters that
-- left their DLQ. Its one reader is retention (`gone_at < now() - …`, deleteExpiredLetters in
-- lib/triage/index-store.ts), which never looks for a NULL; every other gone_at condition is served
-- by the (connection_id, queue, …, gone_at, …) indexes. A scan writes present letters only
-- (gone_at NULL), so it no longer adds an entry here per letter.
-- Same name and column as the schema's @@index([goneAt]).
DROP INDEX "triage_letters_gone_at_idx";
CREATE INDEX "triage_letters_gone_at_idx" ON "triage_letters" ("gone_at") WHERE "gone_at" IS NOT NULL;
