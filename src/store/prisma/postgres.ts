import { PrismaPg } from '@prisma/adapter-pg';
import type { PoolConfig } from 'pg';
import { PrismaClient } from '../../generated/prisma-postgres/client.js';
import { POSTGRES_APPLICATION_NAME } from '../migrate/database-url.js';

export type PostgresPrismaClient = PrismaClient;

export interface PostgresPrismaOptions {
  /** pg pool settings (size, timeouts); `connectionString` is always the given url. */
  pool?: Omit<PoolConfig, 'connectionString'>;
}

/** A Prisma client on the Postgres database at `url`. Does not migrate: run `migrate()` first. */
export function createPostgresPrisma(
  url: string,
  options: PostgresPrismaOptions = {},
): PostgresPrismaClient {
  const adapter = new PrismaPg({
    application_name: POSTGRES_APPLICATION_NAME,
    ...options.pool,
    connectionString: url,
  });
  return new PrismaClient({ adapter });
}
