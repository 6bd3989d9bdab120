-- audit_log loses its unique index on hash. No query reads audit_log by hash (the chain walk, the
-- checkpoints and every page read by id, action, queue, time or operation), and the index detects
-- nothing the chain walk does not: each row's MAC covers its prev_hash, which must be the hash of the
-- row before it, so two rows of a chain that verifies cannot share a hash (short of a MAC collision),
-- and a copied row breaks the link after it. Each audit row (one per letter a redrive moves) paid for
-- an entry at a random place in it: 5-9 µs of Postgres per row of a 2,000-row INSERT into a table of
-- 200,000 rows (backend CPU, alternated with the index and without it), the dearest of its indexes.

-- DropIndex
DROP INDEX "audit_log_hash_key";
