-- AlterTable
ALTER TABLE "thread" ADD COLUMN "expires_at" DATETIME;

-- CreateIndex
CREATE INDEX "thread_expires_at_id_idx" ON "thread"("expires_at", "id") WHERE expires_at IS NOT NULL AND deleted_at IS NULL;
