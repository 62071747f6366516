-- AlterTable
ALTER TABLE "thread" ADD COLUMN     "spend_calls" INTEGER,
ADD COLUMN     "spend_cost_usd" DOUBLE PRECISION,
ADD COLUMN     "spend_input_tokens" INTEGER,
ADD COLUMN     "spend_output_tokens" INTEGER;
