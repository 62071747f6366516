/**
 * Prisma clients for Weft's two providers. Each provider has its own generated client
 * (src/generated/prisma-<provider>, from prisma/<provider>/schema.prisma — run
 * `npm run prisma:generate` after install); the schemas are identical, so are the model APIs.
 */
import { parseDatabaseUrl } from '../migrate/database-url.js';
import { createPostgresPrisma, type PostgresPrismaClient } from './postgres.js';
import { createSqlitePrisma, type SqlitePrismaClient } from './sqlite.js';

export { createPostgresPrisma, type PostgresPrismaClient } from './postgres.js';
export { createSqlitePrisma, type SqlitePrismaClient } from './sqlite.js';
export {
  SQLITE_BUSY_TIMEOUT_MS,
  SQLITE_PRAGMA_SCRIPT,
  SQLITE_PRAGMAS,
} from './sqlite-pragmas.js';

export type WeftPrisma =
  | { provider: 'sqlite'; prisma: SqlitePrismaClient }
  | { provider: 'postgres'; prisma: PostgresPrismaClient };

/** A client for a DATABASE_URL (see parseDatabaseUrl for the accepted forms). */
export function createPrisma(databaseUrl: string): WeftPrisma {
  const target = parseDatabaseUrl(databaseUrl);
  return target.provider === 'sqlite'
    ? { provider: 'sqlite', prisma: createSqlitePrisma(target.path) }
    : { provider: 'postgres', prisma: createPostgresPrisma(target.url) };
}
