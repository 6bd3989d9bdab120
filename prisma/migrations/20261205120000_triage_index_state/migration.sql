-- CreateTable
CREATE TABLE "triage_index_state" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "positions" JSONB NOT NULL DEFAULT '{}',
    "seen_depth" INTEGER,
    "seen_entered" BIGINT,
    "hot" BOOLEAN NOT NULL DEFAULT false,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,
    "round_at" TIMESTAMPTZ(3) NOT NULL,
    "indexed_at" TIMESTAMPTZ(3),
    "letters" INTEGER NOT NULL DEFAULT 0,
    "summary_pending" BOOLEAN NOT NULL DEFAULT false,
    "summary_at" TIMESTAMPTZ(3),
    "rescan_job_id" UUID,
    "rescan_at" TIMESTAMPTZ(3),
    "rescan_letters" INTEGER,

    CONSTRAINT "triage_index_state_pkey" PRIMARY KEY ("connection_id","queue")
);
