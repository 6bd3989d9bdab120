-- AlterTable
ALTER TABLE "triage_letters" ADD COLUMN     "retention_from" TIMESTAMPTZ(3);
