/**
 * Prisma clients for Weft's two providers. Each provider has its own generated client
 * (src/generated/prisma-<provider>, from prisma/<provider>/schema.prisma — run
 * `npm run prisma:generate` after install); the schemas are identical, so are the model APIs.
 */
import { parseDatabaseUrl } from '../migrate/database-url.js';
import { createPostgresPrisma, type PostgresPrismaClient } from './postgres.js';
import { attachPostgresReader, type PostgresReader } from './postgres-reader.js';
import { createSqlitePrisma, type SqlitePrismaClient } from './sqlite.js';
import { attachSqliteReader, type SqliteReader } from './sqlite-reader.js';

export {
  SQLITE_BUSY_TIMEOUT_MS,
  SQLITE_PRAGMA_SCRIPT,
  SQLITE_PRAGMAS,
} from '../migrate/sqlite-pragmas.js';
export { createPostgresPrisma, type PostgresPrismaClient } from './postgres.js';
export { createSqlitePrisma, type SqlitePrismaClient } from './sqlite.js';

export type WeftPrisma =
  | {
      provider: 'sqlite';
      prisma: SqlitePrismaClient;
      /** The database file (the search thread opens its own connection to it). */
      path: string;
      /** Where raw SELECTs run (sqlite-reader.ts); without one, on the Prisma client. */
      reader?: SqliteReader;
      /** How long a search may run (WEFT_QUERY_TIMEOUT_MS): its thread is ended past it. */
      queryTimeoutMs?: number | undefined;
    }
  | {
      provider: 'postgres';
      prisma: PostgresPrismaClient;
      /** Where raw SELECTs run (postgres-reader.ts); without one, on the Prisma client. */
      reader?: PostgresReader;
      /** The read pool's statement_timeout (WEFT_QUERY_TIMEOUT_MS). */
      queryTimeoutMs?: number | undefined;
    };

export interface WeftPrismaOptions {
  /**
   * How long one read may run, in ms (WEFT_QUERY_TIMEOUT_MS): Postgres's statement_timeout on
   * every connection of the read pool; on SQLite, the deadline of a search, which runs in a
   * thread of its own that is terminated past it (sqlite-searcher.ts). Undefined: none.
   */
  queryTimeoutMs?: number | undefined;
}

/** A SQLite client with its read connection (closed with the client). */
export function createSqliteWeft(path: string, options: WeftPrismaOptions = {}): WeftPrisma {
  const prisma = createSqlitePrisma(path);
  return {
    provider: 'sqlite',
    prisma,
    path,
    reader: attachSqliteReader(prisma, path),
    queryTimeoutMs: options.queryTimeoutMs,
  };
}

/** A client for a DATABASE_URL (see parseDatabaseUrl for the accepted forms). */
export function createPrisma(databaseUrl: string, options: WeftPrismaOptions = {}): WeftPrisma {
  const target = parseDatabaseUrl(databaseUrl);
  return target.provider === 'sqlite'
    ? createSqliteWeft(target.path, options)
    : createPostgresWeft(target.url, options);
}

/** A Postgres client with its read pool (closed with the client). */
export function createPostgresWeft(url: string, options: WeftPrismaOptions = {}): WeftPrisma {
  const prisma = createPostgresPrisma(url);
  return {
    provider: 'postgres',
    prisma,
    reader: attachPostgresReader(prisma, url, options.queryTimeoutMs),
    queryTimeoutMs: options.queryTimeoutMs,
  };
}
