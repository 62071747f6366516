-- CreateTable
CREATE TABLE "thread" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "tenant_id" TEXT NOT NULL DEFAULT 'default',
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL,
    "metadata" TEXT NOT NULL,
    "node_types" TEXT NOT NULL,
    "allow_dynamic_node_types" BOOLEAN NOT NULL DEFAULT false,
    "log_length" INTEGER NOT NULL DEFAULT 0,
    "state_hash" TEXT NOT NULL,
    "frontier" TEXT NOT NULL DEFAULT '[]',
    "forked_from_id" TEXT,
    "forked_up_to_index" INTEGER
);

-- CreateTable
CREATE TABLE "log_entry" (
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "entry_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "recorded_at" DATETIME NOT NULL,
    "entry" TEXT NOT NULL,

    PRIMARY KEY ("thread_id", "log_index"),
    CONSTRAINT "log_entry_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "node" (
    "thread_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,
    "resource_key" TEXT,
    "log_index" INTEGER NOT NULL,
    "run_id" TEXT,
    "taint" TEXT,
    "usage" TEXT,
    "is_frontier" BOOLEAN NOT NULL,
    "is_current" BOOLEAN NOT NULL,

    PRIMARY KEY ("thread_id", "id"),
    CONSTRAINT "node_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "node_parent" (
    "thread_id" TEXT NOT NULL,
    "child_id" TEXT NOT NULL,
    "parent_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    PRIMARY KEY ("thread_id", "child_id", "parent_id"),
    CONSTRAINT "node_parent_thread_id_child_id_fkey" FOREIGN KEY ("thread_id", "child_id") REFERENCES "node" ("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "node_parent_thread_id_parent_id_fkey" FOREIGN KEY ("thread_id", "parent_id") REFERENCES "node" ("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "resource_head" (
    "thread_id" TEXT NOT NULL,
    "resource_key" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "semantic_type" TEXT,
    "semantic_key" TEXT,

    PRIMARY KEY ("thread_id", "resource_key"),
    CONSTRAINT "resource_head_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "resource_head_thread_id_node_id_fkey" FOREIGN KEY ("thread_id", "node_id") REFERENCES "node" ("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "run" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "thread_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "goal" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,
    "updated_at" DATETIME NOT NULL,
    "started_at" DATETIME,
    "waiting_timeout_at" DATETIME,
    "execution_deadline_at" DATETIME,
    "state" TEXT NOT NULL,
    "total_input_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_output_tokens" INTEGER NOT NULL DEFAULT 0,
    "total_cost_usd" REAL NOT NULL DEFAULT 0,
    "log_index" INTEGER NOT NULL,
    CONSTRAINT "run_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "run_spend" (
    "run_id" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "calls" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("run_id", "dimension", "key"),
    CONSTRAINT "run_spend_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "idempotency_record" (
    "scope" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "response" TEXT NOT NULL,
    "thread_id" TEXT,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("scope", "key")
);

-- CreateTable
CREATE TABLE "snapshot" (
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("thread_id", "log_index"),
    CONSTRAINT "snapshot_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
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
