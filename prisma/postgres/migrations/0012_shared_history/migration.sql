-- DropForeignKey
ALTER TABLE "node_parent" DROP CONSTRAINT "node_parent_thread_id_parent_seq_fkey";

-- DropForeignKey
ALTER TABLE "resource_head" DROP CONSTRAINT "resource_head_thread_id_node_id_fkey";

-- AlterTable
ALTER TABLE "thread" ADD COLUMN     "base_log_length" INTEGER,
ADD COLUMN     "base_node_count" INTEGER,
ADD COLUMN     "base_thread_id" TEXT;

-- CreateIndex
CREATE INDEX "thread_base_thread_id_idx" ON "thread"("base_thread_id");
