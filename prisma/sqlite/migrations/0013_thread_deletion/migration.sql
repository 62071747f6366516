-- AlterTable
ALTER TABLE "thread" ADD COLUMN "deleted_at" DATETIME;

-- CreateTable
CREATE TABLE "audit_entry" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenant_id" TEXT NOT NULL,
    "recorded_at" DATETIME NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "log_length" INTEGER NOT NULL,
    "state_hash" TEXT NOT NULL
);

-- CreateIndex
CREATE INDEX "audit_entry_tenant_id_recorded_at_idx" ON "audit_entry"("tenant_id", "recorded_at");
