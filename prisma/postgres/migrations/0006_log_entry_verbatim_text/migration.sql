-- AlterTable
ALTER TABLE "log_entry" ADD COLUMN     "verbatim" TEXT;
