-- audit_log loses its (actor_email, at) index. The audit page's actor filter is a case-insensitive
-- substring match (ILIKE '%…%', lib/audit/index.ts), which a btree cannot serve, and no other query
-- reads audit_log by actor_email; every audit row (one per letter a redrive moves) paid for an
-- entry in it: about 1.5 µs of Postgres per row of a 2,000-row INSERT, measured on a copy of the
-- table with each index alone. The other indexes each serve a query: id (pages, the chain walk),
-- hash (unique), at (time ranges), (action, at) and (action, id) (action filters, repair trails,
-- distinct actions), (queue, at) (queue filter, whether a letter is known), operation_id.

-- DropIndex
DROP INDEX "audit_log_actor_email_at_idx";
