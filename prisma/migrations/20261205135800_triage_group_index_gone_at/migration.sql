-- Hand-written (Prisma's schema cannot say INCLUDE): the group's index carries gone_at, so counting a
-- group's present letters (gone_at IS NULL) reads the index only, not a heap page per letter.
-- Same name and key columns as the schema's @@index([connectionId, queue, groupKey, arrivedAt, id]).
DROP INDEX "triage_letters_connection_id_queue_group_key_arrived_at_id_idx";
CREATE INDEX "triage_letters_connection_id_queue_group_key_arrived_at_id_idx"
  ON "triage_letters" ("connection_id", "queue", "group_key", "arrived_at", "id") INCLUDE ("gone_at");
