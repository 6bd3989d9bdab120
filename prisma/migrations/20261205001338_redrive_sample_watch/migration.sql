-- AlterTable
ALTER TABLE "redrive_plans" ADD COLUMN     "sample_watch" JSONB;
