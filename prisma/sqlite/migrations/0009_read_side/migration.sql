-- AlterTable
ALTER TABLE "run" ADD COLUMN "waiting_for" TEXT;

-- CreateTable
CREATE TABLE "approval" (
    "thread_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "requested_at" DATETIME NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "waiting_for" TEXT NOT NULL,
    "prompt" TEXT,
    "expires_at" DATETIME,
    "request_index" INTEGER NOT NULL,
    "resolved_at" DATETIME,
    "resolved_index" INTEGER,
    "decision" TEXT,
    "response" TEXT,

    PRIMARY KEY ("thread_id", "run_id", "requested_at"),
    CONSTRAINT "approval_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "approval_thread_id_run_id_fkey" FOREIGN KEY ("thread_id", "run_id") REFERENCES "run" ("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "activity" (
    "tenant_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,

    PRIMARY KEY ("tenant_id", "seq"),
    CONSTRAINT "activity_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "activity_counter" (
    "tenant_id" TEXT NOT NULL PRIMARY KEY,
    "seq" INTEGER NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_thread" (
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
    "forked_up_to_index" INTEGER,
    "node_count" INTEGER NOT NULL DEFAULT 0
);
INSERT INTO "new_thread" ("allow_dynamic_node_types", "created_at", "forked_from_id", "forked_up_to_index", "frontier", "id", "log_length", "metadata", "node_types", "state_hash", "tenant_id", "updated_at") SELECT "allow_dynamic_node_types", "created_at", "forked_from_id", "forked_up_to_index", "frontier", "id", "log_length", "metadata", "node_types", "state_hash", "tenant_id", "updated_at" FROM "thread";
DROP TABLE "thread";
ALTER TABLE "new_thread" RENAME TO "thread";
CREATE INDEX "thread_tenant_id_created_at_idx" ON "thread"("tenant_id", "created_at");
CREATE INDEX "thread_tenant_id_updated_at_id_idx" ON "thread"("tenant_id", "updated_at", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "approval_tenant_id_requested_at_idx" ON "approval"("tenant_id", "requested_at");

-- CreateIndex
CREATE INDEX "approval_tenant_id_state_requested_at_idx" ON "approval"("tenant_id", "state", "requested_at");

-- CreateIndex
CREATE INDEX "approval_thread_id_state_requested_at_idx" ON "approval"("thread_id", "state", "requested_at");

-- CreateIndex
CREATE UNIQUE INDEX "activity_thread_id_log_index_key" ON "activity"("thread_id", "log_index");

-- CreateIndex
CREATE INDEX "run_tenant_id_status_waiting_for_idx" ON "run"("tenant_id", "status", "waiting_for");

-- Backfill the new read models from the rows already stored. A run whose state is sealed at
-- rest (encrypted, not JSON) cannot be read here: it gets its waiting_for with its next commit,
-- and an approval it is waiting on at upgrade time is not listed.
UPDATE "thread" SET "node_count" = (SELECT COUNT(*) FROM "node" WHERE "node"."thread_id" = "thread"."id");

UPDATE "run" SET "waiting_for" = COALESCE(json_extract("state", '$.waiting_for'), 'human_approval')
WHERE "status" = 'waiting' AND json_valid("state");

INSERT INTO "approval" ("thread_id", "run_id", "requested_at", "tenant_id", "state", "waiting_for", "prompt", "expires_at", "request_index")
SELECT "thread_id", "id",
       COALESCE(replace(json_extract("state", '$.waiting_since'), 'Z', '+00:00'), "updated_at"),
       "tenant_id", 'pending', "waiting_for", "state" -> '$.pending_approval', "waiting_timeout_at", "log_index"
FROM "run" WHERE "status" = 'waiting' AND json_valid("state");

INSERT INTO "activity" ("tenant_id", "seq", "thread_id", "log_index")
SELECT t."tenant_id",
       ROW_NUMBER() OVER (PARTITION BY t."tenant_id" ORDER BY e."recorded_at", e."thread_id", e."log_index"),
       e."thread_id", e."log_index"
FROM "log_entry" e JOIN "thread" t ON t."id" = e."thread_id";

INSERT INTO "activity_counter" ("tenant_id", "seq")
SELECT "tenant_id", MAX("seq") FROM "activity" GROUP BY "tenant_id";
