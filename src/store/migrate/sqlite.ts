import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { migrationLedger } from '../tables/index.js';
import { asMigrationFailure } from './errors.js';
import { type AppliedMigration, type Migration, pendingMigrations } from './migration-files.js';
import { SQLITE_BUSY_TIMEOUT_MS, SQLITE_PRAGMAS } from './sqlite-pragmas.js';

const M = migrationLedger.c;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${migrationLedger.sql} (
  ${M.name} TEXT NOT NULL PRIMARY KEY,
  ${M.checksum} TEXT NOT NULL,
  ${M.appliedAt} TEXT NOT NULL
)`;

/**
 * Runs a pragma, retrying while the file is locked, up to the busy timeout. Switching a fresh
 * file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once — without its busy
 * handler — when another process holds the file (two processes migrating one new file).
 */
function pragmaWaiting(db: Database.Database, pragma: string): void {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma(pragma);
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * Applies pending migrations to a SQLite file (created with its directory if missing), one
 * `BEGIN IMMEDIATE` transaction each. The write lock taken by IMMEDIATE serialises concurrent
 * migrators; each re-reads the applied list inside its transaction, so none applies twice.
 *
 * Foreign keys are switched off on this connection for the duration (the pragma is a no-op inside
 * a transaction, so it must happen before BEGIN): Prisma's SQLite migrations rebuild a table by
 * copy + DROP + rename, and with enforcement on, DROP TABLE would run ON DELETE CASCADE on every
 * child row. Integrity is checked instead with `foreign_key_check` before each COMMIT.
 */
export function migrateSqlite(
  path: string,
  migrations: readonly Migration[],
  log: (message: string) => void,
): string[] {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  const applied: string[] = [];
  try {
    for (const pragma of SQLITE_PRAGMAS) pragmaWaiting(db, pragma);
    db.pragma('foreign_keys = OFF');
    db.exec(CREATE_TABLE);
    const readApplied = db.prepare<[], AppliedMigration>(
      `SELECT ${M.name}, ${M.checksum} FROM ${migrationLedger.sql} ORDER BY ${M.name}`,
    );
    const record = db.prepare<[string, string, string]>(
      `${migrationLedger.insertHead} VALUES ${migrationLedger.tuple}`,
    );
    for (;;) {
      db.exec('BEGIN IMMEDIATE');
      let next: Migration | undefined;
      try {
        next = pendingMigrations(migrations, readApplied.all())[0];
        if (next === undefined) {
          db.exec('COMMIT');
          return applied;
        }
        db.exec(next.sql);
        const violations = db.pragma('foreign_key_check') as unknown[];
        if (violations.length > 0) {
          throw new Error(
            `${violations.length} foreign key violation(s) after the migration, first: ` +
              JSON.stringify(violations[0]),
          );
        }
        record.run(next.name, next.checksum, new Date().toISOString());
        db.exec('COMMIT');
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw asMigrationFailure(error, next?.name);
      }
      applied.push(next.name);
      log(`applied migration ${next.name}`);
    }
  } finally {
    db.close();
  }
}
