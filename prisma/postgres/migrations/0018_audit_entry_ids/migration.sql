-- Hand-written: an audit entry's id was `thread_deleted:<storage key>:<thread creation time>`,
-- and the storage key of a thread of any tenant but the default one is its id, U+001F and the
-- tenant's name; the id shows in `auditEntries` and inside its cursors. New entries get a digest
-- of that key (src/engine/delete.ts); the ids written before get a random one. An id is only
-- compared with itself (the guard against two deletions of one thread racing, and the cursor's
-- tie-break), and these threads are already deleted.
UPDATE "audit_entry" SET "id" = 'thread_deleted:' || md5(random()::text || "id")
WHERE "id" LIKE 'thread_deleted:%:%';
