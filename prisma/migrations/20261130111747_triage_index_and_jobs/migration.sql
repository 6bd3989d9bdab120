-- CreateTable
CREATE TABLE "jobs" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'queued',
    "params" JSONB NOT NULL DEFAULT '{}',
    "progress" JSONB NOT NULL DEFAULT '{}',
    "checkpoint" JSONB,
    "error" TEXT,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),
    "heartbeat_at" TIMESTAMPTZ(3),

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "triage_letters" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "letter_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "kafka_partition" INTEGER,
    "kafka_offset" BIGINT,
    "message_id" TEXT,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "gone_at" TIMESTAMPTZ(3),
    "dead_lettered_at" TIMESTAMPTZ(3),
    "arrived_at" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT,
    "origin_queue" TEXT,
    "exception_class" TEXT,
    "exception_message" TEXT,
    "normalized_message" TEXT,
    "top_frame" TEXT,
    "group_key" TEXT NOT NULL,
    "group_label" TEXT NOT NULL,
    "group_basis" TEXT NOT NULL,
    "disposition" TEXT NOT NULL,
    "rule_id" TEXT,
    "receive_count" INTEGER,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "body_size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "payload_ciphertext" BYTEA,
    "payload_key_id" TEXT,
    "payload_truncated" BOOLEAN NOT NULL DEFAULT false,
    "handled_outcome" TEXT,
    "scan_id" UUID NOT NULL,

    CONSTRAINT "triage_letters_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "triage_groups" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "basis" TEXT NOT NULL,
    "exception_class" TEXT,
    "normalized_message" TEXT,
    "sample_message" TEXT,
    "top_frame" TEXT,
    "reason" TEXT,
    "count" INTEGER NOT NULL,
    "handled_count" INTEGER NOT NULL,
    "first_at" TIMESTAMPTZ(3) NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "origins" TEXT[],
    "versions" TEXT[],
    "sample_letter_ids" TEXT[],
    "buckets" JSONB NOT NULL,
    "bucket_seconds" INTEGER NOT NULL,
    "refreshed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "triage_groups_pkey" PRIMARY KEY ("connection_id","queue","group_key")
);

-- CreateTable
CREATE TABLE "triage_rule_sets" (
    "id" INTEGER NOT NULL,
    "rules" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "updated_by" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "triage_rule_sets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "jobs_state_created_at_idx" ON "jobs"("state", "created_at");

-- CreateIndex
CREATE INDEX "jobs_connection_id_queue_created_at_idx" ON "jobs"("connection_id", "queue", "created_at");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_arrived_at_id_idx" ON "triage_letters"("connection_id", "queue", "arrived_at", "id");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_group_key_arrived_at_id_idx" ON "triage_letters"("connection_id", "queue", "group_key", "arrived_at", "id");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_exception_class_idx" ON "triage_letters"("connection_id", "queue", "exception_class");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_origin_queue_idx" ON "triage_letters"("connection_id", "queue", "origin_queue");

-- CreateIndex
CREATE INDEX "triage_letters_gone_at_idx" ON "triage_letters"("gone_at");

-- CreateIndex
CREATE UNIQUE INDEX "triage_letters_connection_id_queue_letter_id_key" ON "triage_letters"("connection_id", "queue", "letter_id");
