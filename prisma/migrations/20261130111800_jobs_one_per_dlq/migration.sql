-- Hand-written (not generated from schema.prisma): constraints Prisma's schema cannot express.

-- At most one job holds a DLQ at a time: a scan and a redrive never run on the same DLQ at once.
-- A second claimer racing for another job of the same DLQ fails on this index and backs off.
CREATE UNIQUE INDEX "jobs_one_active_per_dlq" ON "jobs" ("connection_id", "queue")
  WHERE "state" IN ('running', 'paused', 'cancelling');

ALTER TABLE "jobs" ADD CONSTRAINT "jobs_state_check"
  CHECK ("state" IN ('queued', 'running', 'paused', 'cancelling', 'cancelled', 'succeeded', 'failed'));

-- Header filters are JSONB containment (headers @> '{"name":"value"}'), served by this index.
CREATE INDEX "triage_letters_headers_gin" ON "triage_letters" USING GIN ("headers" jsonb_path_ops);
