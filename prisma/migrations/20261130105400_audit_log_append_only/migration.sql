-- Hand-written (not generated from schema.prisma): the audit log is append-only.
-- Rows are also chained by hash (lib/audit), so a change made by someone who can disable these
-- triggers is still detected by `npm run audit:verify`.

CREATE OR REPLACE FUNCTION "audit_log_refuse_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'Audit rows can only be inserted.';
END;
$$;

CREATE TRIGGER "audit_log_no_update_delete"
  BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "audit_log_refuse_change"();

CREATE TRIGGER "audit_log_no_truncate"
  BEFORE TRUNCATE ON "audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_refuse_change"();
