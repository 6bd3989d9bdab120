-- Handled Kafka offsets carry the topic's id (KIP-516), so a topic deleted and created again under
-- the same name does not inherit the old topic's marks. Existing rows get '' (generation unknown):
-- see lib/brokers/kafka/handled-store.ts for how they are checked before they count.

-- AlterTable
ALTER TABLE "kafka_handled_offsets" ADD COLUMN "topic_id" TEXT NOT NULL DEFAULT '';

-- DropIndex
DROP INDEX "kafka_handled_offsets_connection_id_topic_partition_offset_key";

-- CreateIndex
CREATE UNIQUE INDEX "kafka_handled_offsets_connection_id_topic_topic_id_partitio_key" ON "kafka_handled_offsets"("connection_id", "topic", "topic_id", "partition", "offset");
