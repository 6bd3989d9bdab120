-- AlterTable
ALTER TABLE "dlq_status" ADD COLUMN     "in_flight" INTEGER;
