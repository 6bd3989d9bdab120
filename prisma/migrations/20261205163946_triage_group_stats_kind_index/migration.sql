-- CreateIndex
CREATE INDEX "triage_group_stats_connection_id_queue_kind_group_key_value_idx" ON "triage_group_stats"("connection_id", "queue", "kind", "group_key", "value");
