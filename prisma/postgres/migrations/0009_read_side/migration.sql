-- AlterTable
ALTER TABLE "thread" ADD COLUMN     "node_count" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "run" ADD COLUMN     "waiting_for" TEXT;

-- CreateTable
CREATE TABLE "approval" (
    "thread_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "requested_at" TIMESTAMP(3) NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "waiting_for" TEXT NOT NULL,
    "prompt" TEXT,
    "expires_at" TIMESTAMP(3),
    "request_index" INTEGER NOT NULL,
    "resolved_at" TIMESTAMP(3),
    "resolved_index" INTEGER,
    "decision" TEXT,
    "response" TEXT,

    CONSTRAINT "approval_pkey" PRIMARY KEY ("thread_id","run_id","requested_at")
);

-- CreateTable
CREATE TABLE "activity" (
    "tenant_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,

    CONSTRAINT "activity_pkey" PRIMARY KEY ("tenant_id","seq")
);

-- CreateTable
CREATE TABLE "activity_counter" (
    "tenant_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,

    CONSTRAINT "activity_counter_pkey" PRIMARY KEY ("tenant_id")
);

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

-- AddForeignKey
ALTER TABLE "approval" ADD CONSTRAINT "approval_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approval" ADD CONSTRAINT "approval_thread_id_run_id_fkey" FOREIGN KEY ("thread_id", "run_id") REFERENCES "run"("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "activity" ADD CONSTRAINT "activity_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Backfill the new read models from the rows already stored. A run whose state is sealed at
-- rest (encrypted, not JSON) cannot be read here: it gets its waiting_for with its next commit,
-- and an approval it is waiting on at upgrade time is not listed.
UPDATE "thread" SET "node_count" = (SELECT COUNT(*) FROM "node" WHERE "node"."thread_id" = "thread"."id");

UPDATE "run" SET "waiting_for" = COALESCE("state"::jsonb ->> 'waiting_for', 'human_approval')
WHERE "status" = 'waiting' AND "state" LIKE '{%';

INSERT INTO "approval" ("thread_id", "run_id", "requested_at", "tenant_id", "state", "waiting_for", "prompt", "expires_at", "request_index")
SELECT "thread_id", "id",
       COALESCE((("state"::jsonb ->> 'waiting_since')::timestamptz AT TIME ZONE 'UTC'), "updated_at"),
       "tenant_id", 'pending', "waiting_for", ("state"::jsonb -> 'pending_approval')::text, "waiting_timeout_at", "log_index"
FROM "run" WHERE "status" = 'waiting' AND "state" LIKE '{%';

INSERT INTO "activity" ("tenant_id", "seq", "thread_id", "log_index")
SELECT t."tenant_id",
       ROW_NUMBER() OVER (PARTITION BY t."tenant_id" ORDER BY e."recorded_at", e."thread_id", e."log_index"),
       e."thread_id", e."log_index"
FROM "log_entry" e JOIN "thread" t ON t."id" = e."thread_id";

INSERT INTO "activity_counter" ("tenant_id", "seq")
SELECT "tenant_id", MAX("seq") FROM "activity" GROUP BY "tenant_id";
