-- AlterTable
ALTER TABLE "redrive_letters" ADD COLUMN     "leftover_check" BOOLEAN NOT NULL DEFAULT false;
