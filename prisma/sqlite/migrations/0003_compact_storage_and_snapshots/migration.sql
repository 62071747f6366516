-- DropIndex
DROP INDEX "node_thread_id_kind_sequence_idx";

-- DropIndex
DROP INDEX "node_thread_id_resource_key_sequence_idx";

-- DropIndex
DROP INDEX "node_thread_id_run_id_idx";

-- AlterTable
ALTER TABLE "log_entry" ADD COLUMN "packed" BLOB;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_node_parent" (
    "thread_id" TEXT NOT NULL,
    "child_seq" INTEGER NOT NULL,
    "parent_seq" INTEGER NOT NULL,
    "position" INTEGER NOT NULL,

    PRIMARY KEY ("thread_id", "child_seq", "parent_seq"),
    CONSTRAINT "node_parent_thread_id_child_seq_fkey" FOREIGN KEY ("thread_id", "child_seq") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "node_parent_thread_id_parent_seq_fkey" FOREIGN KEY ("thread_id", "parent_seq") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Hand-written: edges name their nodes by sequence now.
INSERT INTO "new_node_parent" ("thread_id", "child_seq", "parent_seq", "position")
SELECT p."thread_id", c."sequence", q."sequence", p."position" FROM "node_parent" p
JOIN "node" c ON c."thread_id" = p."thread_id" AND c."id" = p."child_id"
JOIN "node" q ON q."thread_id" = p."thread_id" AND q."id" = p."parent_id";
DROP TABLE "node_parent";
ALTER TABLE "new_node_parent" RENAME TO "node_parent";
CREATE INDEX "node_parent_thread_id_parent_seq_idx" ON "node_parent"("thread_id", "parent_seq");
CREATE TABLE "new_snapshot" (
    "thread_id" TEXT NOT NULL,
    "log_index" INTEGER NOT NULL,
    "state_hash" TEXT NOT NULL,
    "checksum" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("thread_id", "log_index"),
    CONSTRAINT "snapshot_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Hand-written: earlier snapshot rows (none were ever written) are caches in an older format: dropped.
DROP TABLE "snapshot";
ALTER TABLE "new_snapshot" RENAME TO "snapshot";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "node_thread_id_resource_key_sequence_idx" ON "node"("thread_id", "resource_key", "sequence") WHERE resource_key IS NOT NULL;

-- CreateIndex
CREATE INDEX "node_thread_id_run_id_sequence_idx" ON "node"("thread_id", "run_id", "sequence") WHERE run_id IS NOT NULL;
