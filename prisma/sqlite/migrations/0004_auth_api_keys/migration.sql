-- CreateTable
CREATE TABLE "api_key" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenant_id" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "name" TEXT,
    "created_at" DATETIME NOT NULL,
    "revoked_at" DATETIME
);

-- CreateIndex
CREATE INDEX "api_key_tenant_id_idx" ON "api_key"("tenant_id");

-- CreateIndex
CREATE INDEX "run_tenant_id_created_at_idx" ON "run"("tenant_id", "created_at");
