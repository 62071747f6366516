-- AlterTable
ALTER TABLE "thread" ADD COLUMN "payload_salt" TEXT;
