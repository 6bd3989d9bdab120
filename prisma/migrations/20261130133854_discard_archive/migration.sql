-- CreateTable
CREATE TABLE "discard_plans" (
    "job_id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "selection" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "total" INTEGER NOT NULL,
    "accept_risk" BOOLEAN NOT NULL DEFAULT false,
    "created_by_id" TEXT,
    "created_by_email" TEXT,
    "created_by_role" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discard_plans_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "discard_letters" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "letter_id" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "message_id" TEXT,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "reason" TEXT,
    "archive_id" UUID,
    "discarded_at" TIMESTAMPTZ(3),
    "audited" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "discard_letters_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "archived_letters" (
    "id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "letter_id" TEXT NOT NULL,
    "message_id" TEXT,
    "discard_job_id" UUID NOT NULL,
    "discarded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "discarded_by_id" TEXT,
    "discarded_by_email" TEXT,
    "discarded_by_role" TEXT,
    "discard_reason" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "body_size" INTEGER NOT NULL,
    "content_type" TEXT,
    "exception_class" TEXT,
    "failure_reason" TEXT,
    "origin_queue" TEXT,
    "dead_lettered_at" TIMESTAMPTZ(3),
    "metadata" JSONB NOT NULL,
    "payload_ciphertext" BYTEA NOT NULL,
    "payload_key_id" TEXT NOT NULL,
    "envelope_ciphertext" BYTEA NOT NULL,
    "envelope_key_id" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "restore_state" TEXT,
    "restore_claimed_at" TIMESTAMPTZ(3),
    "restore_operation_id" UUID,
    "restored_at" TIMESTAMPTZ(3),
    "restored_by_email" TEXT,
    "restore_reason" TEXT,
    "restore_error" TEXT,

    CONSTRAINT "archived_letters_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "discard_plans_connection_id_queue_created_at_idx" ON "discard_plans"("connection_id", "queue", "created_at");

-- CreateIndex
CREATE INDEX "discard_letters_job_id_state_seq_idx" ON "discard_letters"("job_id", "state", "seq");

-- CreateIndex
CREATE INDEX "discard_letters_job_id_seq_idx" ON "discard_letters"("job_id", "seq");

-- CreateIndex
CREATE INDEX "discard_letters_job_id_audited_idx" ON "discard_letters"("job_id", "audited");

-- CreateIndex
CREATE UNIQUE INDEX "discard_letters_job_id_letter_id_key" ON "discard_letters"("job_id", "letter_id");

-- CreateIndex
CREATE INDEX "archived_letters_discarded_at_id_idx" ON "archived_letters"("discarded_at", "id");

-- CreateIndex
CREATE INDEX "archived_letters_connection_id_queue_discarded_at_id_idx" ON "archived_letters"("connection_id", "queue", "discarded_at", "id");

-- CreateIndex
CREATE INDEX "archived_letters_discarded_by_email_discarded_at_idx" ON "archived_letters"("discarded_by_email", "discarded_at");

-- CreateIndex
CREATE INDEX "archived_letters_expires_at_idx" ON "archived_letters"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "archived_letters_discard_job_id_letter_id_key" ON "archived_letters"("discard_job_id", "letter_id");
