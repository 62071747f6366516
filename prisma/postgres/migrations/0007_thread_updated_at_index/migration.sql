-- CreateIndex
CREATE INDEX "thread_tenant_id_updated_at_id_idx" ON "thread"("tenant_id", "updated_at", "id");
