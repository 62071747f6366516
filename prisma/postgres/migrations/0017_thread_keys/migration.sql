-- CreateTable
CREATE TABLE "thread_key" (
    "thread_id" TEXT NOT NULL,
    "wrapped" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "thread_key_pkey" PRIMARY KEY ("thread_id")
);
