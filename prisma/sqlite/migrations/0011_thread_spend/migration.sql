-- AlterTable
ALTER TABLE "thread" ADD COLUMN "spend_calls" INTEGER;
ALTER TABLE "thread" ADD COLUMN "spend_cost_usd" REAL;
ALTER TABLE "thread" ADD COLUMN "spend_input_tokens" INTEGER;
ALTER TABLE "thread" ADD COLUMN "spend_output_tokens" INTEGER;
