-- Hand-written: text search over the triage index as each role sees it, without reading every row.
--
-- A masked role's text filter matches the exception class, or the message as that role sees it (its
-- masked text in exception_search, else the raw message). triage_search_text(...) is the class and
-- the message as each role sees it, one line each, so "that text ILIKE '%q%'" implies
-- "triage_search_text(...) ILIKE '%q%'": the queries AND the latter after the exact, per-role
-- condition to find candidates through a trigram index, and never decide a match by it. It holds no
-- text that no role sees: a raw value every role sees masked is not in the index, so a guess of it
-- finds no candidates, right or wrong (no answer, and no timing, tells the two apart).
-- (A role with no rules searches the raw message without this index: lib/triage/queries.ts.)
--
-- One expression of immutable operators (no subquery, no concat_ws), so the planner inlines it and
-- a row's text costs a few string operations. It names every role (lib/auth/permissions.ts ROLES):
-- a new role needs its line here (queries.integration.test.ts fails until it has one). Roles that
-- see the same text (the default rules mask alike for all) add it once.
CREATE FUNCTION triage_search_text(cls TEXT, msg TEXT, search JSONB) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT COALESCE(cls, '')
    || COALESCE(E'\n' || COALESCE(search->>'viewer', msg), '')
    || COALESCE(E'\n' || NULLIF(COALESCE(search->>'operator', msg), COALESCE(search->>'viewer', msg)), '')
    || COALESCE(E'\n' || NULLIF(NULLIF(COALESCE(search->>'admin', msg), COALESCE(search->>'viewer', msg)),
         COALESCE(search->>'operator', msg)), '')
$$;

-- The trigram index needs pg_trgm (contrib; a trusted extension, so the database owner may create
-- it). Where it is not available (the embedded PGlite), searches filter the same way without it.
DO $$
BEGIN
  BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm is not available: triage text search runs without its trigram index';
    RETURN;
  END;
  EXECUTE 'CREATE INDEX "triage_letters_search_text_trgm" ON "triage_letters" USING GIN '
    '(triage_search_text("exception_class", "exception_message", "exception_search") gin_trgm_ops)';
END $$;

-- Statistics of the indexed expression, so the planner tells a rare text (the index) from a common
-- one (the newest rows in order, filtered) before autovacuum's next analyze.
ANALYZE "triage_letters";
