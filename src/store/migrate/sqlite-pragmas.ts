/**
 * Per-connection SQLite settings for every connection Weft opens (the migration runner and the
 * Prisma adapter). `journal_mode` persists in the file; the others must be set on each connection.
 * - WAL: readers never block the writer and vice versa.
 * - synchronous=FULL: in WAL mode, NORMAL may lose the last commits on power loss; an
 *   acknowledged write must survive.
 * - busy_timeout: wait for another connection's write lock instead of failing at once.
 * - foreign_keys: better-sqlite3 enables them by default; stated here so it never depends on that.
 * - secure_delete: content that is deleted or overwritten (a deleted thread, a redacted payload)
 *   is zeroed in the file instead of lingering in free pages, for a small cost on deletes.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

export const SQLITE_PRAGMAS: readonly string[] = [
  // First: switching a fresh file to WAL takes a lock another process may hold (two processes
  // migrating one new file), and only a connection with a busy timeout waits for it.
  `busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`,
  'journal_mode = WAL',
  'synchronous = FULL',
  'foreign_keys = ON',
  'secure_delete = ON',
];

/** The pragmas as one script (for adapters that take SQL text). */
export const SQLITE_PRAGMA_SCRIPT = SQLITE_PRAGMAS.map((p) => `PRAGMA ${p};`).join('\n');
