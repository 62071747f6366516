-- Hand-written: nothing to change on Postgres. A redacted node's search text is its node_text
-- row, which redaction deletes (the tsvector lives in that row). The migration exists so both
-- providers keep the same numbering.
SELECT 1;
