-- CreateIndex
CREATE INDEX "thread_tenant_id_deleted_at_updated_at_id_idx" ON "thread"("tenant_id", "deleted_at", "updated_at", "id");
