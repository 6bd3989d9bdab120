-- AlterTable
ALTER TABLE "redrive_letters" ADD COLUMN     "retry_later" BOOLEAN NOT NULL DEFAULT false;
