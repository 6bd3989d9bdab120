-- CreateTable
CREATE TABLE "task_leases" (
    "name" TEXT NOT NULL,
    "owner" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "task_leases_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "dlq_samples" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "resolution" INTEGER NOT NULL,
    "bucket_at" TIMESTAMPTZ(3) NOT NULL,
    "depth" INTEGER,
    "depth_max" INTEGER,
    "inflow" INTEGER,
    "oldest_at" TIMESTAMPTZ(3),
    "deadline_at" TIMESTAMPTZ(3),
    "samples" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "dlq_samples_pkey" PRIMARY KEY ("connection_id","queue","resolution","bucket_at")
);

-- CreateTable
CREATE TABLE "dlq_status" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "queue_type" TEXT NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,
    "depth" INTEGER,
    "inflow_per_min" DOUBLE PRECISION,
    "entered_total" BIGINT,
    "oldest_at" TIMESTAMPTZ(3),
    "oldest_source" TEXT,
    "oldest_as_of" TIMESTAMPTZ(3),
    "retention_ms" BIGINT,
    "deadline_at" TIMESTAMPTZ(3),
    "error" TEXT,
    "missing_since" TIMESTAMPTZ(3),

    CONSTRAINT "dlq_status_pkey" PRIMARY KEY ("connection_id","queue")
);

-- CreateTable
CREATE TABLE "dlq_findings" (
    "id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT,
    "code" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "object" TEXT NOT NULL,
    "why" TEXT NOT NULL,
    "fix" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "resolved_at" TIMESTAMPTZ(3),
    "acknowledged_by" TEXT,
    "acknowledged_at" TIMESTAMPTZ(3),

    CONSTRAINT "dlq_findings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_rules" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "params" JSONB NOT NULL,
    "connection_id" TEXT,
    "queue_pattern" TEXT,
    "owner_team" TEXT,
    "webhook_url" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_rules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_states" (
    "rule_id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "value" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_states_pkey" PRIMARY KEY ("rule_id","connection_id","queue")
);

-- CreateTable
CREATE TABLE "alert_deliveries" (
    "id" BIGSERIAL NOT NULL,
    "rule_id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    "status_code" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "alert_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dlq_owners" (
    "id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "connection_pattern" TEXT,
    "queue_pattern" TEXT NOT NULL,
    "team" TEXT NOT NULL,
    "contact" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dlq_owners_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "dlq_samples_resolution_bucket_at_idx" ON "dlq_samples"("resolution", "bucket_at");

-- CreateIndex
CREATE INDEX "dlq_findings_connection_id_queue_idx" ON "dlq_findings"("connection_id", "queue");

-- CreateIndex
CREATE INDEX "dlq_findings_resolved_at_severity_idx" ON "dlq_findings"("resolved_at", "severity");

-- CreateIndex
CREATE INDEX "alert_deliveries_state_next_attempt_at_idx" ON "alert_deliveries"("state", "next_attempt_at");

-- CreateIndex
CREATE INDEX "alert_deliveries_rule_id_created_at_idx" ON "alert_deliveries"("rule_id", "created_at");

-- CreateIndex
CREATE INDEX "dlq_owners_position_idx" ON "dlq_owners"("position");

-- At most one open finding per connection, code and object (hand-written: partial index).
CREATE UNIQUE INDEX "dlq_findings_open_key" ON "dlq_findings"("connection_id", "code", "object") WHERE "resolved_at" IS NULL;

-- A rule's states and delivery log go with the rule (its deletion is in the audit log).
ALTER TABLE "alert_states" ADD CONSTRAINT "alert_states_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE;
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE;
