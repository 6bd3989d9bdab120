-- DropIndex
DROP INDEX "triage_letters_connection_id_queue_exception_class_idx";

-- DropIndex
DROP INDEX "triage_letters_connection_id_queue_origin_queue_idx";

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_exception_class_gone_at__idx" ON "triage_letters"("connection_id", "queue", "exception_class", "gone_at", "arrived_at");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_origin_queue_gone_at_arr_idx" ON "triage_letters"("connection_id", "queue", "origin_queue", "gone_at", "arrived_at");

-- CreateIndex
CREATE INDEX "triage_letters_connection_id_queue_reason_gone_at_arrived_a_idx" ON "triage_letters"("connection_id", "queue", "reason", "gone_at", "arrived_at");
