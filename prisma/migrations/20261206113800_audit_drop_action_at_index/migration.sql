-- audit_log loses its (action, at) index; (action, id) serves every query that used it. Plans on a
-- 1,000,000-row copy of the log (EXPLAIN ANALYZE, with the index and without it): one rare action in
-- an old day's range 0.04 -> 1.1 ms ((action, id) and (at) together), the repair trail's
-- newest-first look-ups (by action, queue and target 2.4 -> 5.8 ms; by details.copyLetterId 1.1 ->
-- 2.5 ms, (action, id)); every other filter of the audit page (the several-actions walk included)
-- used the primary key, (at) or (queue, at) before and after. Each audit row (one per letter a redrive
-- moves) paid for an entry in it: about 3 µs of Postgres per row of a 2,000-row INSERT (backend
-- CPU, alternated with the index and without it).

-- DropIndex
DROP INDEX "audit_log_action_at_idx";
