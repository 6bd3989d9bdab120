-- CreateTable
CREATE TABLE "triage_letter_search" (
    "id" BIGINT NOT NULL,
    "search_text" TEXT NOT NULL,

    CONSTRAINT "triage_letter_search_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "triage_search_pending" (
    "id" BIGINT NOT NULL,
    "n" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "triage_search_pending_pkey" PRIMARY KEY ("id")
);

-- Hand-written: text search over the triage index off the scan's path. The trigram index on
-- triage_search_text(...) (migration *_triage_search_text) cost every written letter its
-- trigrams; the same text now lives in triage_letter_search, filled in batches after the letters
-- are written (lib/triage/letter-search.ts). Until a letter's text is there, it is listed in
-- triage_search_pending, and a text search tests those letters directly (lib/triage/queries.ts):
-- a lag never hides a letter from a search.

-- Every inserted letter, and every letter whose class, message or masked text changed, is pending.
-- ON CONFLICT DO UPDATE takes the pending row's lock and bumps n: a fill that read the letter
-- before this change deletes the pending row only where n is still what it read.
CREATE FUNCTION triage_search_pending_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_search_pending AS p (id) SELECT id FROM new_rows
    ON CONFLICT (id) DO UPDATE SET n = p.n + 1;
  RETURN NULL;
END $$;

CREATE FUNCTION triage_search_pending_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO triage_search_pending AS p (id)
    SELECT nr.id FROM new_rows nr JOIN old_rows o ON o.id = nr.id
    WHERE nr.exception_class IS DISTINCT FROM o.exception_class
       OR nr.exception_message IS DISTINCT FROM o.exception_message
       OR nr.exception_search IS DISTINCT FROM o.exception_search
    ON CONFLICT (id) DO UPDATE SET n = p.n + 1;
  RETURN NULL;
END $$;

CREATE FUNCTION triage_search_pending_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM triage_letter_search WHERE id IN (SELECT id FROM old_rows);
  DELETE FROM triage_search_pending WHERE id IN (SELECT id FROM old_rows);
  RETURN NULL;
END $$;

CREATE FUNCTION triage_search_pending_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE triage_letter_search, triage_search_pending;
  RETURN NULL;
END $$;

CREATE TRIGGER triage_search_pending_insert AFTER INSERT ON triage_letters
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_search_pending_on_insert();
CREATE TRIGGER triage_search_pending_update AFTER UPDATE ON triage_letters
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_search_pending_on_update();
CREATE TRIGGER triage_search_pending_delete AFTER DELETE ON triage_letters
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION triage_search_pending_on_delete();
CREATE TRIGGER triage_search_pending_truncate AFTER TRUNCATE ON triage_letters
  FOR EACH STATEMENT EXECUTE FUNCTION triage_search_pending_on_truncate();

-- The letters already indexed, filled at once (before the index is built, which is faster).
INSERT INTO triage_letter_search (id, search_text)
  SELECT id, triage_search_text(exception_class, exception_message, exception_search) FROM triage_letters;

DROP INDEX IF EXISTS "triage_letters_search_text_trgm";

-- pg_trgm where available (migration *_triage_search_text created the extension where it could).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX "triage_letter_search_trgm" ON "triage_letter_search" USING GIN ("search_text" gin_trgm_ops)';
  END IF;
END $$;

ANALYZE "triage_letter_search";
