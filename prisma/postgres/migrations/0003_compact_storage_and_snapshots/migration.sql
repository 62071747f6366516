-- DropForeignKey
ALTER TABLE "node_parent" DROP CONSTRAINT "node_parent_thread_id_child_id_fkey";

-- DropForeignKey
ALTER TABLE "node_parent" DROP CONSTRAINT "node_parent_thread_id_parent_id_fkey";

-- DropIndex
DROP INDEX "node_thread_id_kind_sequence_idx";

-- DropIndex
DROP INDEX "node_thread_id_resource_key_sequence_idx";

-- DropIndex
DROP INDEX "node_thread_id_run_id_idx";

-- DropIndex
DROP INDEX "node_parent_thread_id_parent_id_idx";

-- AlterTable
ALTER TABLE "log_entry" ADD COLUMN     "packed" BYTEA;

-- AlterTable (hand-written: edges name their nodes by sequence now, existing rows converted)
ALTER TABLE "node_parent" ADD COLUMN     "child_seq" INTEGER,
ADD COLUMN     "parent_seq" INTEGER;
UPDATE "node_parent" p SET "child_seq" = c."sequence" FROM "node" c
WHERE c."thread_id" = p."thread_id" AND c."id" = p."child_id";
UPDATE "node_parent" p SET "parent_seq" = q."sequence" FROM "node" q
WHERE q."thread_id" = p."thread_id" AND q."id" = p."parent_id";
ALTER TABLE "node_parent" DROP CONSTRAINT "node_parent_pkey",
DROP COLUMN "child_id",
DROP COLUMN "parent_id",
ALTER COLUMN "child_seq" SET NOT NULL,
ALTER COLUMN "parent_seq" SET NOT NULL,
ADD CONSTRAINT "node_parent_pkey" PRIMARY KEY ("thread_id", "child_seq", "parent_seq");

-- AlterTable (hand-written: earlier snapshot rows, none ever written, are caches in an older format)
DELETE FROM "snapshot";
ALTER TABLE "snapshot" ADD COLUMN     "checksum" TEXT NOT NULL,
ADD COLUMN     "state_hash" TEXT NOT NULL;

-- CreateIndex
CREATE INDEX "node_thread_id_resource_key_sequence_idx" ON "node"("thread_id", "resource_key", "sequence") WHERE (resource_key IS NOT NULL);

-- CreateIndex
CREATE INDEX "node_thread_id_run_id_sequence_idx" ON "node"("thread_id", "run_id", "sequence") WHERE (run_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "node_parent_thread_id_parent_seq_idx" ON "node_parent"("thread_id", "parent_seq");

-- AddForeignKey
ALTER TABLE "node_parent" ADD CONSTRAINT "node_parent_thread_id_child_seq_fkey" FOREIGN KEY ("thread_id", "child_seq") REFERENCES "node"("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node_parent" ADD CONSTRAINT "node_parent_thread_id_parent_seq_fkey" FOREIGN KEY ("thread_id", "parent_seq") REFERENCES "node"("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE;
