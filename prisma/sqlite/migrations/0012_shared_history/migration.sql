-- AlterTable
ALTER TABLE "thread" ADD COLUMN "base_log_length" INTEGER;
ALTER TABLE "thread" ADD COLUMN "base_node_count" INTEGER;
ALTER TABLE "thread" ADD COLUMN "base_thread_id" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_node_parent" (
    "thread_id" TEXT NOT NULL,
    "child_seq" INTEGER NOT NULL,
    "parent_seq" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,

    PRIMARY KEY ("thread_id", "child_seq", "parent_seq"),
    CONSTRAINT "node_parent_thread_id_child_seq_fkey" FOREIGN KEY ("thread_id", "child_seq") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_node_parent" ("child_seq", "parent_seq", "position", "thread_id") SELECT "child_seq", "parent_seq", "position", "thread_id" FROM "node_parent";
DROP TABLE "node_parent";
ALTER TABLE "new_node_parent" RENAME TO "node_parent";
CREATE INDEX "node_parent_thread_id_parent_seq_idx" ON "node_parent"("thread_id", "parent_seq");
CREATE TABLE "new_resource_head" (
    "thread_id" TEXT NOT NULL,
    "resource_key" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "semantic_type" TEXT,
    "semantic_key" TEXT,

    PRIMARY KEY ("thread_id", "resource_key"),
    CONSTRAINT "resource_head_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_resource_head" ("node_id", "resource_key", "semantic_key", "semantic_type", "thread_id") SELECT "node_id", "resource_key", "semantic_key", "semantic_type", "thread_id" FROM "resource_head";
DROP TABLE "resource_head";
ALTER TABLE "new_resource_head" RENAME TO "resource_head";
CREATE INDEX "resource_head_thread_id_semantic_type_semantic_key_idx" ON "resource_head"("thread_id", "semantic_type", "semantic_key");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "thread_base_thread_id_idx" ON "thread"("base_thread_id");
