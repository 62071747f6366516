-- CreateTable
CREATE TABLE "thread_key" (
    "thread_id" TEXT NOT NULL PRIMARY KEY,
    "wrapped" TEXT NOT NULL,
    "created_at" DATETIME NOT NULL
);
