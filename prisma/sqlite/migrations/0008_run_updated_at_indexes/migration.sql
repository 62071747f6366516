-- CreateIndex
CREATE INDEX "run_tenant_id_updated_at_idx" ON "run"("tenant_id", "updated_at");

-- CreateIndex
CREATE INDEX "run_thread_id_updated_at_idx" ON "run"("thread_id", "updated_at");
