-- Hand-written: redaction (redactNodes) and deletion remove text from the search index, and an
-- FTS5 index otherwise keeps a deleted row's tokens in its segments until they are merged. With
-- secure-delete, FTS5 removes them from the index at once. The setting is stored in the index's
-- own config table, so it holds for every connection from now on.
INSERT INTO "node_search" ("node_search", "rank") VALUES ('secure-delete', 1);
