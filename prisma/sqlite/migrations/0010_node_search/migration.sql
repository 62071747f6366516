-- CreateTable
CREATE TABLE "node_text" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "thread_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "tsv" tsvector,
    CONSTRAINT "node_text_thread_id_sequence_fkey" FOREIGN KEY ("thread_id", "sequence") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "node_text_thread_id_sequence_key" ON "node_text"("thread_id", "sequence");

-- Hand-written: the full-text index, which the Prisma schema cannot express. `node_search` is
-- an FTS5 table over node_text.body (external content: it keeps only the index, the text stays
-- in node_text), naming rows by node_text.id, an INTEGER PRIMARY KEY, so VACUUM cannot renumber
-- them. The triggers keep it in step with node_text inside the writing transaction.
-- test/store/migrate.test.ts and test/architecture/storage.test.ts leave exactly this table and
-- its shadow tables (node_search_data, _idx, _docsize, _config) out of their comparisons.
CREATE VIRTUAL TABLE "node_search" USING fts5("body", content='node_text', content_rowid='id');

CREATE TRIGGER "node_text_search_insert" AFTER INSERT ON "node_text" BEGIN
  INSERT INTO "node_search" (rowid, "body") VALUES (new."id", new."body");
END;

CREATE TRIGGER "node_text_search_delete" AFTER DELETE ON "node_text" BEGIN
  INSERT INTO "node_search" ("node_search", rowid, "body") VALUES ('delete', old."id", old."body");
END;

CREATE TRIGGER "node_text_search_update" AFTER UPDATE ON "node_text" BEGIN
  INSERT INTO "node_search" ("node_search", rowid, "body") VALUES ('delete', old."id", old."body");
  INSERT INTO "node_search" (rowid, "body") VALUES (new."id", new."body");
END;

-- Backfill: the text of every node stored so far, as the store writes it for new nodes (the
-- payload's string values in canonical order, joined by spaces, the highlight markers U+E000 and
-- U+E001 and NUL replaced by spaces, at most 65,536 characters). A payload sealed at rest
-- (`wenc1:…`) is not indexed: with a key, search is off unless WEFT_SEARCH_PLAINTEXT_INDEX=1,
-- and only nodes written after it was enabled are found.
INSERT INTO "node_text" ("thread_id", "sequence", "kind", "body")
SELECT "thread_id", "sequence", "kind", "body" FROM (
  SELECT n."thread_id", n."sequence", n."kind",
         substr(replace(replace(replace(
           (SELECT group_concat(j."value", ' ') FROM json_tree(n."payload") j WHERE j."type" = 'text'),
           char(0), ' '), char(57344), ' '), char(57345), ' '), 1, 65536) AS "body"
  FROM "node" n
  WHERE n."payload" NOT LIKE 'wenc1:%' AND json_valid(n."payload")
  ORDER BY n."thread_id", n."sequence"
) WHERE "body" IS NOT NULL AND "body" <> '';
