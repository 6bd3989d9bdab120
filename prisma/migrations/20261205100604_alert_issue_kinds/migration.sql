-- CreateTable
CREATE TABLE "alert_issue_claims" (
    "rule_id" UUID NOT NULL,
    "event_id" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_issue_claims_pkey" PRIMARY KEY ("rule_id","event_id")
);

-- CreateTable
CREATE TABLE "alert_group_states" (
    "rule_id" UUID NOT NULL,
    "connection_id" TEXT NOT NULL,
    "queue" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "value" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_group_states_pkey" PRIMARY KEY ("rule_id","connection_id","queue","group_key")
);

-- CreateTable
CREATE TABLE "alert_cursors" (
    "name" TEXT NOT NULL,
    "last_id" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_cursors_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "alert_issue_claims_created_at_idx" ON "alert_issue_claims"("created_at");

-- CreateIndex
CREATE INDEX "alert_group_states_rule_id_state_idx" ON "alert_group_states"("rule_id", "state");

-- A rule's claims and group states go with the rule (its deletion is in the audit log).
ALTER TABLE "alert_issue_claims" ADD CONSTRAINT "alert_issue_claims_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE;
ALTER TABLE "alert_group_states" ADD CONSTRAINT "alert_group_states_rule_id_fkey" FOREIGN KEY ("rule_id") REFERENCES "alert_rules"("id") ON DELETE CASCADE;
