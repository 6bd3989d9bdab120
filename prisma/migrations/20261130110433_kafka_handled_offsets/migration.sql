-- CreateEnum
CREATE TYPE "KafkaHandledOutcome" AS ENUM ('redriven', 'discarded');

-- CreateTable
CREATE TABLE "kafka_handled_offsets" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "partition" INTEGER NOT NULL,
    "offset" BIGINT NOT NULL,
    "handled_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "operation_id" UUID NOT NULL,
    "outcome" "KafkaHandledOutcome" NOT NULL,

    CONSTRAINT "kafka_handled_offsets_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "kafka_handled_offsets_connection_id_topic_partition_offset_key" ON "kafka_handled_offsets"("connection_id", "topic", "partition", "offset");
