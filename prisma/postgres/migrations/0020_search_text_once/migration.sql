-- AlterTable
ALTER TABLE "node_text" DROP COLUMN "kind",
ALTER COLUMN "body" DROP NOT NULL;

-- node_text.kind was a copy of node.kind, which a search filters by now.
-- Hand-written: the text of a plain payload is the payload's (a search derives it from
-- node.payload): the copy goes. The tsvector stays; only a payload sealed at rest keeps its text.
UPDATE "node_text" t SET "body" = NULL FROM "node" n
WHERE n."thread_id" = t."thread_id" AND n."sequence" = t."sequence"
  AND n."payload" NOT LIKE 'wenc1:%' AND n."payload" NOT LIKE 'wenc2:%';
