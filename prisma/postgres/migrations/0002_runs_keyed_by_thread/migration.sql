-- DropForeignKey
ALTER TABLE "run_spend" DROP CONSTRAINT "run_spend_run_id_fkey";

-- AlterTable
ALTER TABLE "run" DROP CONSTRAINT "run_pkey",
ADD CONSTRAINT "run_pkey" PRIMARY KEY ("thread_id", "id");

-- AlterTable
ALTER TABLE "run_spend" DROP CONSTRAINT "run_spend_pkey",
ADD COLUMN     "thread_id" TEXT NOT NULL,
ADD CONSTRAINT "run_spend_pkey" PRIMARY KEY ("thread_id", "run_id", "dimension", "key");

-- CreateIndex
CREATE INDEX "run_id_idx" ON "run"("id");

-- AddForeignKey
ALTER TABLE "run_spend" ADD CONSTRAINT "run_spend_thread_id_run_id_fkey" FOREIGN KEY ("thread_id", "run_id") REFERENCES "run"("thread_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
