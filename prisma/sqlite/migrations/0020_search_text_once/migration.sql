-- Hand-written: each node's text is stored once. The search index becomes a contentless FTS5
-- table (content='', contentless_delete=1): it keeps the index only, no copy of the text, and a
-- row leaves it by rowid (node_text.id), without the text it was indexed from. node_text.body is
-- null unless the node's payload is sealed at rest (then the payload cannot give the text back);
-- a search reads the text from node.payload. The store writes the index itself (read-model/sql.ts
-- insertNodeTexts), as the text is no longer in the row a trigger could read. The old triggers
-- go first: the table below is rebuilt.
DROP TRIGGER "node_text_search_insert";
DROP TRIGGER "node_text_search_delete";
DROP TRIGGER "node_text_search_update";

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_node_text" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "thread_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "body" TEXT,
    "tsv" tsvector,
    CONSTRAINT "node_text_thread_id_sequence_fkey" FOREIGN KEY ("thread_id", "sequence") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_node_text" ("body", "id", "kind", "sequence", "thread_id", "tsv") SELECT "body", "id", "kind", "sequence", "thread_id", "tsv" FROM "node_text";
DROP TABLE "node_text";
ALTER TABLE "new_node_text" RENAME TO "node_text";
CREATE UNIQUE INDEX "node_text_thread_id_sequence_key" ON "node_text"("thread_id", "sequence");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- Hand-written: the index rebuilt contentless from the texts stored so far, with secure-delete
-- (as migration 0016 set it), so a deleted row's terms leave the index segments at once.
-- test/store/migrate.test.ts and test/architecture/storage.test.ts leave exactly this table and
-- its shadow tables (node_search_data, _idx, _docsize, _config) out of their comparisons.
DROP TABLE "node_search";
CREATE VIRTUAL TABLE "node_search" USING fts5("body", content='', contentless_delete=1);
INSERT INTO "node_search" ("node_search", "rank") VALUES ('secure-delete', 1);
INSERT INTO "node_search" (rowid, "body")
SELECT "id", "body" FROM "node_text" WHERE "body" IS NOT NULL ORDER BY "id";

-- The text of a plain payload is the payload's: the copy goes.
UPDATE "node_text" SET "body" = NULL WHERE EXISTS (
  SELECT 1 FROM "node" n
  WHERE n."thread_id" = "node_text"."thread_id" AND n."sequence" = "node_text"."sequence"
    AND n."payload" NOT LIKE 'wenc1:%' AND n."payload" NOT LIKE 'wenc2:%'
);

-- Redaction and deletion remove a node_text row (cascading from its node or by itself): its
-- terms leave the index with it.
CREATE TRIGGER "node_text_search_delete" AFTER DELETE ON "node_text" BEGIN
  DELETE FROM "node_search" WHERE rowid = old."id";
END;
