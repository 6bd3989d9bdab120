-- audit_log loses its (action, at) index; (action, id) serves every query that used it. Plans on a
-- 1,000,000-row copy of the log (EXPLAIN ANALYZE, with the index and without it): one rare action in
-- an old day's range 0.04 -> 1.1 ms ((action, id) and (at) together), the repair trail's
-- newest-first look-ups (action, queue, target, ordered by at) 2.4 -> 2.6-5.8 ms, the audit page's
-- several-actions walk with a time range 1.1 -> 2.5 ms; every other filter of the audit page used
-- the primary key, (at) or (queue, at) before and after. Each audit row (one per letter a redrive
-- moves) paid for an entry in it: about 3 µs of Postgres per row of a 2,000-row INSERT (backend
-- CPU, alternated with the index and without it).

-- DropIndex
DROP INDEX "audit_log_action_at_idx";
