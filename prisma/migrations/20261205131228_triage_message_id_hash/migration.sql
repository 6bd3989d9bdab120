-- CreateIndex
CREATE INDEX "triage_letters_message_id_idx" ON "triage_letters" USING HASH ("message_id");
