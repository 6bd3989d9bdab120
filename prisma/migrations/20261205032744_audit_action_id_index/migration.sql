-- CreateIndex
CREATE INDEX "audit_log_action_id_idx" ON "audit_log"("action", "id");
