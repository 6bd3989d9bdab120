-- AlterTable
ALTER TABLE "redrive_plans" ADD COLUMN     "repair" JSONB;
