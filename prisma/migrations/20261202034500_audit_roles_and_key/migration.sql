-- Hand-written (not generated from schema.prisma): who may touch audit_log, and the key column.
--
-- The role that runs migrations owns every table (it can ALTER, disable triggers, TRUNCATE). The
-- console itself should connect as a LOGIN role that is a member of dlq_console_app and owns
-- nothing: on audit_log that role may only SELECT and INSERT, so it can neither rewrite nor cut the
-- audit history, nor switch off the append-only trigger. README "Audit log" shows the setup.
-- Roles are cluster-wide and many databases may share one server: everything here is idempotent.

-- Rows chained with HMAC-SHA256 name their key; NULL marks a row of the older, unkeyed sha256 chain.
ALTER TABLE "audit_log" ADD COLUMN IF NOT EXISTS "key_id" TEXT;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console_app') THEN
    CREATE ROLE dlq_console_app NOLOGIN;
  END IF;
EXCEPTION
  -- Another database on this server migrating at the same moment created it first.
  WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

GRANT USAGE ON SCHEMA public TO dlq_console_app;

-- Every table the console works with: ordinary DML, no TRUNCATE, REFERENCES or TRIGGER.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO dlq_console_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO dlq_console_app;

-- The audit log: read and append, nothing else.
REVOKE ALL ON "audit_log" FROM dlq_console_app;
REVOKE ALL ON "audit_log" FROM PUBLIC;
GRANT SELECT, INSERT ON "audit_log" TO dlq_console_app;
REVOKE ALL ON SEQUENCE "audit_log_id_seq" FROM dlq_console_app;
GRANT USAGE, SELECT ON SEQUENCE "audit_log_id_seq" TO dlq_console_app;

-- The migration history is the owner's: the console only reads it.
REVOKE ALL ON "_prisma_migrations" FROM dlq_console_app;
GRANT SELECT ON "_prisma_migrations" TO dlq_console_app;

-- Tables and sequences that later migrations create (as this same owner role) get the same DML.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO dlq_console_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO dlq_console_app;
