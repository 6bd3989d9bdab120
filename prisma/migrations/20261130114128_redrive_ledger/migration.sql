-- CreateTable
CREATE TABLE "redrive_plans" (
    "job_id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "selection" JSONB NOT NULL,
    "target" JSONB NOT NULL,
    "fix" TEXT NOT NULL,
    "sample_size" INTEGER NOT NULL,
    "watch_seconds" INTEGER NOT NULL,
    "rate" DOUBLE PRECISION NOT NULL,
    "redrive_limit" INTEGER NOT NULL,
    "parking" JSONB NOT NULL,
    "breaker_threshold" DOUBLE PRECISION NOT NULL,
    "breaker_window" INTEGER NOT NULL,
    "breaker_min_letters" INTEGER NOT NULL,
    "accept_risk" BOOLEAN NOT NULL DEFAULT false,
    "total" INTEGER NOT NULL,
    "stage" TEXT NOT NULL DEFAULT 'sample',
    "watch_until" TIMESTAMPTZ(3),
    "sample_verdict" TEXT,
    "sample_returned" INTEGER NOT NULL DEFAULT 0,
    "pause_requested" BOOLEAN NOT NULL DEFAULT false,
    "pause_reason" TEXT,
    "breaker_reset_at" TIMESTAMPTZ(3),
    "created_by_id" TEXT,
    "created_by_email" TEXT,
    "created_by_role" TEXT,
    "bulk_started_by" TEXT,
    "bulk_override_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "redrive_plans_pkey" PRIMARY KEY ("job_id")
);

-- CreateTable
CREATE TABLE "redrive_letters" (
    "id" BIGSERIAL NOT NULL,
    "job_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "letter_id" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "message_id" TEXT,
    "original_message_id" TEXT,
    "prev_count" INTEGER NOT NULL DEFAULT 0,
    "ordering_key" TEXT,
    "stage" TEXT,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "destination" TEXT,
    "reason" TEXT,
    "replay_id" UUID,
    "moved_at" TIMESTAMPTZ(3),
    "audited" BOOLEAN NOT NULL DEFAULT true,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "redrive_letters_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "redrive_plans_connection_id_queue_created_at_idx" ON "redrive_plans"("connection_id", "queue", "created_at");

-- CreateIndex
CREATE INDEX "redrive_letters_job_id_state_seq_idx" ON "redrive_letters"("job_id", "state", "seq");

-- CreateIndex
CREATE INDEX "redrive_letters_job_id_seq_idx" ON "redrive_letters"("job_id", "seq");

-- CreateIndex
CREATE INDEX "redrive_letters_job_id_moved_at_idx" ON "redrive_letters"("job_id", "moved_at");

-- CreateIndex
CREATE INDEX "redrive_letters_replay_id_idx" ON "redrive_letters"("replay_id");

-- CreateIndex
CREATE INDEX "redrive_letters_job_id_audited_idx" ON "redrive_letters"("job_id", "audited");

-- CreateIndex
CREATE UNIQUE INDEX "redrive_letters_job_id_letter_id_key" ON "redrive_letters"("job_id", "letter_id");
