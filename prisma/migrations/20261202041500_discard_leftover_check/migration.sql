-- AlterTable
ALTER TABLE "discard_letters" ADD COLUMN     "leftover_check" BOOLEAN NOT NULL DEFAULT false;
