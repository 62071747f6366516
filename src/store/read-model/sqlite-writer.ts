/**
 * The write connection of a SQLite file: better-sqlite3 itself, not a Prisma client. The thread
 * store's writes are a handful of multi-row statements per commit; through Prisma each one paid
 * for the query interpreter, the driver adapter's argument mapping and a fresh `prepare` of a
 * statement with thousands of parameters. Here statements are prepared once per text and reused,
 * and a transaction runs `BEGIN IMMEDIATE … COMMIT` on the connection directly.
 *
 * Values are bound exactly as Prisma's better-sqlite3 adapter binds them (booleans 1/0, dates as
 * ISO-8601 text with `+00:00`, bytes as blobs), so Prisma reads these rows back unchanged.
 *
 * The statements of a transaction all complete synchronously: the transaction never waits on I/O
 * of the event loop while it holds the write lock, so a second connection of this process that
 * busy-waits for the lock cannot deadlock it.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Prisma } from '../../generated/prisma-sqlite/client.js';
import { SQLITE_PRAGMAS } from '../prisma/sqlite-pragmas.js';
import type { RawExecutor } from './sql.js';

/** Prepared statements kept per connection (multi-row texts vary with the row count). */
const STATEMENT_CACHE = 128;

export interface SqliteWriteConnection {
  /** Runs `work` in one `BEGIN IMMEDIATE` transaction: COMMIT when it resolves, else ROLLBACK. */
  transaction<T>(work: (tx: RawExecutor) => Promise<T>): Promise<T>;
  close(): void;
}

const bind = (value: unknown): unknown => {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString().replace('Z', '+00:00');
  if (value === undefined) return null;
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return value;
};

export function openSqliteWriteConnection(path: string): SqliteWriteConnection {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
  const statements = new Map<string, Database.Statement>();

  const prepared = (text: string): Database.Statement => {
    let statement = statements.get(text);
    if (statement === undefined) {
      statement = db.prepare(text);
      if (statements.size >= STATEMENT_CACHE) {
        statements.delete(statements.keys().next().value as string);
      }
      statements.set(text, statement);
    }
    return statement;
  };

  const args = (query: Prisma.Sql): unknown[] => {
    const values = query.values;
    const out = new Array<unknown>(values.length);
    for (let i = 0; i < values.length; i++) out[i] = bind(values[i]);
    return out;
  };

  const executor: RawExecutor = {
    runText(text, values) {
      for (let i = 0; i < values.length; i++) values[i] = bind(values[i]);
      return prepared(text).run(values).changes;
    },
    $executeRaw(query) {
      try {
        return Promise.resolve(prepared(query.sql).run(...args(query)).changes);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    $queryRaw<T>(query: Prisma.Sql) {
      try {
        return Promise.resolve(prepared(query.sql).all(...args(query)) as T);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };

  return {
    async transaction(work) {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(executor);
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
    close: () => db.close(),
  };
}
