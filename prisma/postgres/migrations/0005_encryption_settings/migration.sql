-- CreateTable
CREATE TABLE "weft_setting" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "weft_setting_pkey" PRIMARY KEY ("key")
);
