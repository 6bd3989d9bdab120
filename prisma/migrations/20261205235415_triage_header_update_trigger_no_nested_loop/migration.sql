-- Hand-written: the header counts' UPDATE statement trigger (migration *_triage_header_stats) gets
-- the settings *_triage_update_triggers_no_nested_loop gave the other two UPDATE triggers of
-- triage_letters, for the same reason: PL/pgSQL plans it once per session with the row count of its
-- first call, and no plan of a trigger that runs on every batch of a scan should depend on that.
-- Its join is to the few counted header names; hash or nested loop costs the same there, and JIT
-- never pays for a statement this small. Only settings: the function body is not restated.
ALTER FUNCTION triage_header_stats_on_update() SET enable_nestloop = off;
ALTER FUNCTION triage_header_stats_on_update() SET jit = off;
