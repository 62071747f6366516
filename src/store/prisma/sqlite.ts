import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaClient } from '../../generated/prisma-sqlite/client.js';
import { SQLITE_BUSY_TIMEOUT_MS, SQLITE_PRAGMA_SCRIPT } from '../migrate/sqlite-pragmas.js';

export type SqlitePrismaClient = PrismaClient;

/**
 * The adapter has no connection hook, so the factory applies Weft's pragmas to each connection
 * it opens. Prisma opens one connection per client (adapter-better-sqlite3 serialises its
 * transactions on it behind a mutex).
 */
class WeftSqliteAdapterFactory extends PrismaBetterSqlite3 {
  override async connect() {
    const adapter = await super.connect();
    await adapter.executeScript(SQLITE_PRAGMA_SCRIPT);
    return adapter;
  }
}

/**
 * A Prisma client on the SQLite file at `path` (absolute, or relative to the cwd; its directory
 * is created). Does not migrate: run `migrate()` first. DateTime columns are stored as ISO-8601
 * text (the adapter's default `timestampFormat`), which sorts chronologically.
 */
export function createSqlitePrisma(path: string): SqlitePrismaClient {
  mkdirSync(dirname(path), { recursive: true });
  const adapter = new WeftSqliteAdapterFactory({ url: path, timeout: SQLITE_BUSY_TIMEOUT_MS });
  return new PrismaClient({ adapter });
}
