-- AlterTable
ALTER TABLE "dlq_status" ADD COLUMN     "trend" JSONB;
