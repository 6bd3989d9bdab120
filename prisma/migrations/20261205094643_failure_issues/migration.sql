-- CreateTable
CREATE TABLE "failure_issues" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "exception_class" TEXT,
    "normalized_message" TEXT,
    "state" TEXT NOT NULL,
    "state_changed_at" TIMESTAMPTZ(3) NOT NULL,
    "state_changed_by" TEXT NOT NULL,
    "resolved_at" TIMESTAMPTZ(3),
    "resolve_note" TEXT,
    "ignore_mode" TEXT,
    "ignore_until" TIMESTAMPTZ(3),
    "ignore_until_count" INTEGER,
    "ignore_letters" INTEGER,
    "assignee_kind" TEXT,
    "assignee" TEXT,
    "letters" INTEGER NOT NULL DEFAULT 0,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "failure_issues_pkey" PRIMARY KEY ("connection_id","queue","group_key")
);

-- CreateTable
CREATE TABLE "failure_issue_events" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "from_state" TEXT,
    "to_state" TEXT,
    "text" TEXT,
    "actor_id" TEXT,
    "actor_email" TEXT,
    "actor_role" TEXT,
    "at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "failure_issue_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "failure_issue_cursors" (
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "last_letter_id" BIGINT NOT NULL DEFAULT 0,
    "synced_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "failure_issue_cursors_pkey" PRIMARY KEY ("connection_id","queue")
);

-- CreateIndex
CREATE INDEX "failure_issues_state_last_seen_at_idx" ON "failure_issues"("state", "last_seen_at");

-- CreateIndex
CREATE INDEX "failure_issue_events_connection_id_queue_group_key_id_idx" ON "failure_issue_events"("connection_id", "queue", "group_key", "id");
