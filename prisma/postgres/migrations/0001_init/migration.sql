-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "thread" (
    "id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL DEFAULT 'default',
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "metadata" TEXT NOT NULL,
    "node_types" TEXT NOT NULL,
    "allow_dynamic_node_types" BOOLEAN NOT NULL DEFAULT false,
    "log_length" INTEGER NOT NULL DEFAULT 0,
    "state_hash" TEXT NOT NULL,
    "frontier" TEXT NOT NULL DEFAULT '[]',
    "forked_from_id" TEXT,
    "forked_up_to_index" INTEGER,

    CONSTRAINT "thread_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "log_entry" (
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "entry_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "recorded_at" TIMESTAMP(3) NOT NULL,
    "entry" TEXT NOT NULL,

    CONSTRAINT "log_entry_pkey" PRIMARY KEY ("thread_id","log_index")
);

-- CreateTable
CREATE TABLE "node" (
    "thread_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "resource_key" TEXT,
    "log_index" INTEGER NOT NULL,
    "run_id" TEXT,
    "taint" TEXT,
    "usage" TEXT,
    "is_frontier" BOOLEAN NOT NULL,
    "is_current" BOOLEAN NOT NULL,

    CONSTRAINT "node_pkey" PRIMARY KEY ("thread_id","id")
);

-- CreateTable
CREATE TABLE "node_parent" (
    "thread_id" TEXT NOT NULL,
    "child_id" TEXT NOT NULL,
    "parent_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "node_parent_pkey" PRIMARY KEY ("thread_id","child_id","parent_id")
);

-- CreateTable
CREATE TABLE "resource_head" (
    "thread_id" TEXT NOT NULL,
    "resource_key" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "semantic_type" TEXT,
    "semantic_key" TEXT,

    CONSTRAINT "resource_head_pkey" PRIMARY KEY ("thread_id","resource_key")
);

-- CreateTable
CREATE TABLE "run" (
    "id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "goal" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "started_at" TIMESTAMP(3),
    "waiting_timeout_at" TIMESTAMP(3),
    "execution_deadline_at" TIMESTAMP(3),
    "state" TEXT NOT NULL,
    "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "log_index" INTEGER NOT NULL,

    CONSTRAINT "run_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_spend" (
    "run_id" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "calls" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "run_spend_pkey" PRIMARY KEY ("run_id","dimension","key")
);

-- CreateTable
CREATE TABLE "idempotency_record" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response" TEXT NOT NULL,
    "thread_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "idempotency_record_pkey" PRIMARY KEY ("scope","key")
);

-- CreateTable
CREATE TABLE "snapshot" (
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "snapshot_pkey" PRIMARY KEY ("thread_id","log_index")
);

-- CreateIndex
CREATE INDEX "thread_tenant_id_created_at_idx" ON "thread"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "log_entry_thread_id_entry_id_key" ON "log_entry"("thread_id", "entry_id");

-- CreateIndex
CREATE INDEX "node_thread_id_kind_sequence_idx" ON "node"("thread_id", "kind", "sequence");

-- CreateIndex
CREATE INDEX "node_thread_id_resource_key_sequence_idx" ON "node"("thread_id", "resource_key", "sequence");

-- CreateIndex
CREATE INDEX "node_thread_id_run_id_idx" ON "node"("thread_id", "run_id");

-- CreateIndex
CREATE UNIQUE INDEX "node_thread_id_sequence_key" ON "node"("thread_id", "sequence");

-- CreateIndex
CREATE INDEX "node_parent_thread_id_parent_id_idx" ON "node_parent"("thread_id", "parent_id");

-- CreateIndex
CREATE INDEX "resource_head_thread_id_semantic_type_semantic_key_idx" ON "resource_head"("thread_id", "semantic_type", "semantic_key");

-- CreateIndex
CREATE INDEX "run_thread_id_created_at_idx" ON "run"("thread_id", "created_at");

-- CreateIndex
CREATE INDEX "run_status_idx" ON "run"("status");

-- CreateIndex
CREATE INDEX "run_waiting_timeout_at_idx" ON "run"("waiting_timeout_at");

-- CreateIndex
CREATE INDEX "run_execution_deadline_at_idx" ON "run"("execution_deadline_at");

-- AddForeignKey
ALTER TABLE "log_entry" ADD CONSTRAINT "log_entry_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node" ADD CONSTRAINT "node_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node_parent" ADD CONSTRAINT "node_parent_thread_id_child_id_fkey" FOREIGN KEY ("thread_id", "child_id") REFERENCES "node"("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node_parent" ADD CONSTRAINT "node_parent_thread_id_parent_id_fkey" FOREIGN KEY ("thread_id", "parent_id") REFERENCES "node"("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "resource_head" ADD CONSTRAINT "resource_head_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "resource_head" ADD CONSTRAINT "resource_head_thread_id_node_id_fkey" FOREIGN KEY ("thread_id", "node_id") REFERENCES "node"("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run" ADD CONSTRAINT "run_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_spend" ADD CONSTRAINT "run_spend_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "run"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "snapshot" ADD CONSTRAINT "snapshot_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;
