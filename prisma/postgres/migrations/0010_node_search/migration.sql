-- CreateTable
CREATE TABLE "node_text" (
    "id" SERIAL NOT NULL,
    "thread_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "tsv" tsvector,

    CONSTRAINT "node_text_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "node_text_thread_id_sequence_key" ON "node_text"("thread_id", "sequence");

-- AddForeignKey
ALTER TABLE "node_text" ADD CONSTRAINT "node_text_thread_id_sequence_fkey" FOREIGN KEY ("thread_id", "sequence") REFERENCES "node"("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: the full-text index on tsv (to_tsvector('simple', body), written with each
-- row). The Prisma schema cannot declare a GIN index while the two schemas stay identical
-- (SQLite has no index types), so test/store/migrate.test.ts leaves exactly this index out of
-- its comparison.
CREATE INDEX "node_text_tsv_idx" ON "node_text" USING GIN ("tsv");

-- Backfill: the text of every node stored so far (the payload's string values joined by
-- spaces, the highlight markers U+E000 and U+E001 replaced by spaces, at most 65,536
-- characters). jsonb walks object members in its own key order, so a backfilled body may list
-- the values in another order than the store writes them for new nodes (canonical order); the
-- words are the same. Not indexed: a payload sealed at rest (`wenc1:…`; with a key, search is
-- off unless WEFT_SEARCH_PLAINTEXT_INDEX=1) and one holding a \u0000 escape, which jsonb refuses.
INSERT INTO "node_text" ("thread_id", "sequence", "kind", "body", "tsv")
SELECT "thread_id", "sequence", "kind", "body", to_tsvector('simple', "body") FROM (
  SELECT n."thread_id", n."sequence", n."kind",
         left(replace(replace(
           (SELECT string_agg(v #>> '{}', ' ') FROM jsonb_path_query(n."payload"::jsonb, 'strict $.**') AS v
            WHERE jsonb_typeof(v) = 'string'),
           U&'\E000', ' '), U&'\E001', ' '), 65536) AS "body"
  FROM "node" n
  WHERE n."payload" NOT LIKE 'wenc1:%' AND strpos(n."payload", '\u0000') = 0
  ORDER BY n."thread_id", n."sequence"
) s WHERE "body" IS NOT NULL AND "body" <> '';
