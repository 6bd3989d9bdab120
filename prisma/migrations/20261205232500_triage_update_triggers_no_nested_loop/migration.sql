-- Hand-written: the statement triggers that run on UPDATE of triage_letters join their transition
-- tables (new_rows to old_rows, by id). PL/pgSQL plans each statement once per session, with the
-- row count the transition tables had then; the first UPDATE trigger call of a session is often
-- an INSERT … ON CONFLICT whose rows were all new (0 updated rows), so the cached plan was a nested
-- loop: every later batch of n updated rows cost n × n tuple reads. A rescan of 500-letter batches
-- spent 70-180 ms per trigger per batch there, about 300 µs of Postgres CPU per letter; a markGone
-- or redrive UPDATE of many letters in such a session would be quadratic in their number.
-- With nested loops off in these two functions, the joins are hash joins whatever the first call
-- saw. The LATERAL VALUES of the group counts stays a nested loop (nothing else can run it); its
-- penalty cost would then start JIT compilation (about 1.8 s per plan under load), so JIT is off.
-- Only settings: the function bodies are not restated. A later CREATE OR REPLACE of either
-- function drops these settings and must restate them (a test in
-- lib/triage/index-store.integration.test.ts checks that they are there).
ALTER FUNCTION triage_search_pending_on_update() SET enable_nestloop = off;
ALTER FUNCTION triage_search_pending_on_update() SET jit = off;
ALTER FUNCTION triage_group_stats_on_update() SET enable_nestloop = off;
ALTER FUNCTION triage_group_stats_on_update() SET jit = off;
