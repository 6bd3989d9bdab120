-- Hand-written: text search over exception messages as each role sees them (issue 14, item 1).
-- exception_search holds, per role whose masking rules change the message, the message as that role
-- sees it ({"viewer": "...", ...}; a role absent sees the raw message). search_version is the
-- masking configuration version it was computed under: rows of an older version are not matched by
-- message text (a rescan recomputes them), so a changed rule never searches stale text.
ALTER TABLE "triage_letters" ADD COLUMN "exception_search" JSONB;
ALTER TABLE "triage_letters" ADD COLUMN "search_version" INTEGER;
