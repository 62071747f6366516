-- CreateTable
CREATE TABLE "api_key" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "name" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "api_key_tenant_id_idx" ON "api_key"("tenant_id");

-- CreateIndex
CREATE INDEX "run_tenant_id_created_at_idx" ON "run"("tenant_id", "created_at");
