-- Hand-written: each node's text is stored once, as its payload. The search index becomes a
-- contentless FTS5 table (content=''): it keeps the index only, no copy of the text.
-- node_text.body is null unless the node's payload is sealed at rest (then the payload cannot
-- give the text back and `body` keeps it); a search derives the text from node.payload
-- (read-model/search-text-of.cjs). node_text.kind goes too: a search filters by node.kind.
--
-- A contentless table forgets a row only when told the text it indexed ('delete' with that
-- text); with secure-delete (as 0016 set it) the row's terms then leave the index segments at
-- once. (contentless_delete=1 would forget a row by rowid alone, but it leaves the terms in the
-- segments behind a tombstone, and secure-delete does not apply to it.) So the text is indexed
-- and forgotten by the same SQL expression over what is stored: `body`, or else the string
-- values of the plain JSON payload (json_tree, in document order, joined by spaces, NUL and the
-- markers U+E000 / U+E001 replaced by spaces, at most 65,536 characters), and every path that
-- removes a node's text goes through the node_text delete trigger while the node row still
-- holds the payload that was indexed: deleting a node (a thread's deletion, gc, cascades) and
-- changing its payload (a redaction) delete its node_text row first.
--
-- The old triggers go first: the table below is rebuilt.
DROP TRIGGER "node_text_search_insert";
DROP TRIGGER "node_text_search_delete";
DROP TRIGGER "node_text_search_update";
DROP TABLE "node_search";

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_node_text" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "thread_id" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "body" TEXT,
    "tsv" tsvector,
    CONSTRAINT "node_text_thread_id_sequence_fkey" FOREIGN KEY ("thread_id", "sequence") REFERENCES "node" ("thread_id", "sequence") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_node_text" ("body", "id", "sequence", "thread_id", "tsv") SELECT "body", "id", "sequence", "thread_id", "tsv" FROM "node_text";
DROP TABLE "node_text";
ALTER TABLE "new_node_text" RENAME TO "node_text";
CREATE UNIQUE INDEX "node_text_thread_id_sequence_key" ON "node_text"("thread_id", "sequence");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- The text of a plain payload is the payload's: the copy goes.
UPDATE "node_text" SET "body" = NULL WHERE EXISTS (
  SELECT 1 FROM "node" n
  WHERE n."thread_id" = "node_text"."thread_id" AND n."sequence" = "node_text"."sequence"
    AND json_valid(n."payload")
);

-- columnsize=0: no per-row token counts (a node_search_docsize table), which only FTS5's bm25
-- reads; a search scores each text itself (read-model/search-queries.ts).
-- test/store/migrate.test.ts and test/architecture/storage.test.ts leave exactly this table and
-- its shadow tables (node_search_data, _idx, _config) out of their comparisons.
CREATE VIRTUAL TABLE "node_search" USING fts5("body", content='', columnsize=0);
INSERT INTO "node_search" ("node_search", "rank") VALUES ('secure-delete', 1);

-- The texts stored so far, indexed as the trigger below indexes a new row.
INSERT INTO "node_search" (rowid, "body")
SELECT t."id", coalesce(t."body", (SELECT substr(replace(replace(replace((SELECT group_concat(j."value", ' ') FROM json_tree(n."payload") j
    WHERE j."type" = 'text' AND j."value" <> ''), char(0), ' '), char(57344), ' '), char(57345), ' '), 1, 65536) FROM "node" n
    WHERE n."thread_id" = t."thread_id" AND n."sequence" = t."sequence" AND json_valid(n."payload")))
FROM "node_text" t ORDER BY t."id";

CREATE TRIGGER "node_text_search_insert" AFTER INSERT ON "node_text" BEGIN
  INSERT INTO "node_search" (rowid, "body") VALUES (new."id", coalesce(new."body", (SELECT substr(replace(replace(replace((SELECT group_concat(j."value", ' ') FROM json_tree(n."payload") j
    WHERE j."type" = 'text' AND j."value" <> ''), char(0), ' '), char(57344), ' '), char(57345), ' '), 1, 65536) FROM "node" n
    WHERE n."thread_id" = new."thread_id" AND n."sequence" = new."sequence" AND json_valid(n."payload"))));
END;

CREATE TRIGGER "node_text_search_delete" BEFORE DELETE ON "node_text" BEGIN
  INSERT INTO "node_search" ("node_search", rowid, "body") VALUES ('delete', old."id", coalesce(old."body", (SELECT substr(replace(replace(replace((SELECT group_concat(j."value", ' ') FROM json_tree(n."payload") j
    WHERE j."type" = 'text' AND j."value" <> ''), char(0), ' '), char(57344), ' '), char(57345), ' '), 1, 65536) FROM "node" n
    WHERE n."thread_id" = old."thread_id" AND n."sequence" = old."sequence" AND json_valid(n."payload"))));
END;

CREATE TRIGGER "node_search_node_delete" BEFORE DELETE ON "node" BEGIN
  DELETE FROM "node_text" WHERE "thread_id" = old."thread_id" AND "sequence" = old."sequence";
END;

CREATE TRIGGER "node_search_node_payload" BEFORE UPDATE OF "payload" ON "node"
WHEN old."payload" IS NOT new."payload" BEGIN
  DELETE FROM "node_text" WHERE "thread_id" = old."thread_id" AND "sequence" = old."sequence";
END;
