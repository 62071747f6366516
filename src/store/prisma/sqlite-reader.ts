/**
 * The read connection of a SQLite file: better-sqlite3 itself, beside the Prisma client, for the
 * store's raw `SELECT`s. Through Prisma, each read paid for its query interpreter, its argument
 * and result mapping and a fresh `prepare` of the statement — several times the cost of the
 * statement itself on the small, indexed reads a page makes. Here a statement is prepared once
 * per text and its rows come back as the driver reads them (strings, numbers, null, Buffers),
 * which the tables' decoders take as they take Prisma's (src/store/tables).
 *
 * The connection is opened on first use and is read-only (`query_only`); in WAL mode it sees
 * every committed write of the writer thread and of other processes, as Prisma's connection
 * did. Statements that return no rows, and values the driver cannot bind, are left to Prisma.
 */
import Database from 'better-sqlite3';
import { createCache } from '../cache.js';
import { SQLITE_BUSY_TIMEOUT_MS } from '../migrate/sqlite-pragmas.js';
import { bindAll, closeWithClient, NO_BIND } from './reader-binding.js';

/** Prepared statements kept per connection; the oldest is dropped past this. */
const MAX_STATEMENTS = 1_000;

export interface SqliteReader {
  /** The rows of `text`, or undefined when Prisma must run it (no rows, unbindable values). */
  all(text: string, values: readonly unknown[]): Array<Record<string, unknown>> | undefined;
  close(): void;
}

/** The form better-sqlite3 binds (Prisma's SQLite adapter binds the same forms), or NO_BIND. */
function bindable(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'bigint':
      return value;
    case 'boolean':
      return value ? 1 : 0;
    case 'undefined':
      return null;
    default:
      if (value === null || Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) {
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
      // Dates as the adapter writes them (src/store/tables): ISO-8601 with an explicit offset.
      if (value instanceof Date) return value.toISOString().replace('Z', '+00:00');
      return NO_BIND;
  }
}

export function openSqliteReader(path: string): SqliteReader {
  let db: Database.Database | undefined;
  // `false`: the text is not a read (a cache holds no null).
  const statements = createCache<Database.Statement | false>({ maxEntries: MAX_STATEMENTS });
  const connection = () => {
    if (db === undefined) {
      db = new Database(path, { fileMustExist: true });
      db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      db.pragma('query_only = ON');
    }
    return db;
  };
  const statementFor = (text: string): Database.Statement | null => {
    const known = statements.get(text);
    if (known !== undefined) return known || null;
    const prepared = connection().prepare(text);
    const statement = prepared.reader ? prepared : false;
    statements.set(text, statement);
    return statement || null;
  };
  return {
    all(text, values) {
      const bound = bindAll(values, bindable);
      if (bound === undefined) return undefined;
      const statement = statementFor(text);
      if (statement === null) return undefined;
      return statement.all(...bound) as Array<Record<string, unknown>>;
    },
    close() {
      statements.clear();
      db?.close();
      db = undefined;
    },
  };
}

/** A reader for `client` (a Prisma client on the file at `path`), closed with it. */
export function attachSqliteReader(client: { $disconnect(): Promise<void> }, path: string) {
  const reader = openSqliteReader(path);
  closeWithClient(client, reader.close);
  return reader;
}
