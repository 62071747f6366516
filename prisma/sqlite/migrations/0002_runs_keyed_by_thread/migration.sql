-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_run" (
    "thread_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
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

    PRIMARY KEY ("thread_id", "id"),
    CONSTRAINT "run_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_run" ("created_at", "execution_deadline_at", "goal", "id", "log_index", "started_at", "state", "status", "tenant_id", "thread_id", "total_cost_usd", "total_input_tokens", "total_output_tokens", "updated_at", "waiting_timeout_at") SELECT "created_at", "execution_deadline_at", "goal", "id", "log_index", "started_at", "state", "status", "tenant_id", "thread_id", "total_cost_usd", "total_input_tokens", "total_output_tokens", "updated_at", "waiting_timeout_at" FROM "run";
DROP TABLE "run";
ALTER TABLE "new_run" RENAME TO "run";
CREATE INDEX "run_id_idx" ON "run"("id");
CREATE INDEX "run_thread_id_created_at_idx" ON "run"("thread_id", "created_at");
CREATE INDEX "run_status_idx" ON "run"("status");
CREATE INDEX "run_waiting_timeout_at_idx" ON "run"("waiting_timeout_at");
CREATE INDEX "run_execution_deadline_at_idx" ON "run"("execution_deadline_at");
CREATE TABLE "new_run_spend" (
    "thread_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" REAL NOT NULL DEFAULT 0,
    "calls" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("thread_id", "run_id", "dimension", "key"),
    CONSTRAINT "run_spend_thread_id_run_id_fkey" FOREIGN KEY ("thread_id", "run_id") REFERENCES "run" ("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_run_spend" ("calls", "cost_usd", "dimension", "input_tokens", "key", "output_tokens", "run_id") SELECT "calls", "cost_usd", "dimension", "input_tokens", "key", "output_tokens", "run_id" FROM "run_spend";
DROP TABLE "run_spend";
ALTER TABLE "new_run_spend" RENAME TO "run_spend";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
