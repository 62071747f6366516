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

export { createPostgresPrisma, type PostgresPrismaClient } from './postgres.js';
export { createSqlitePrisma, type SqlitePrismaClient } from './sqlite.js';
export {
  SQLITE_BUSY_TIMEOUT_MS,
  SQLITE_PRAGMA_SCRIPT,
  SQLITE_PRAGMAS,
} from './sqlite-pragmas.js';

export type WeftPrisma =
  | {
      provider: 'sqlite';
      prisma: SqlitePrismaClient;
      /** Where raw SELECTs run (sqlite-reader.ts); without one, on the Prisma client. */
      reader?: SqliteReader;
    }
  | {
      provider: 'postgres';
      prisma: PostgresPrismaClient;
      /** Where raw SELECTs run (postgres-reader.ts); without one, on the Prisma client. */
      reader?: PostgresReader;
    };

/** A SQLite client with its read connection (closed with the client). */
export function createSqliteWeft(path: string): WeftPrisma {
  const prisma = createSqlitePrisma(path);
  return { provider: 'sqlite', prisma, reader: attachSqliteReader(prisma, path) };
}

/** A client for a DATABASE_URL (see parseDatabaseUrl for the accepted forms). */
export function createPrisma(databaseUrl: string): WeftPrisma {
  const target = parseDatabaseUrl(databaseUrl);
  return target.provider === 'sqlite'
    ? createSqliteWeft(target.path)
    : createPostgresWeft(target.url);
}

/** A Postgres client with its read pool (closed with the client). */
export function createPostgresWeft(url: string): WeftPrisma {
  const prisma = createPostgresPrisma(url);
  return { provider: 'postgres', prisma, reader: attachPostgresReader(prisma, url) };
}
