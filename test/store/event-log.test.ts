/**
 * Runs the event-log store conformance suite on every backend: the in-memory reference store,
 * Prisma on SQLite (a fresh, migrated file per test) and Prisma on Postgres (a fresh, migrated
 * database per suite; skipped with a printed reason when Postgres is absent, failing under
 * REQUIRE_POSTGRES=1). The Postgres fixture hands the suite a second store on its own client,
 * so the concurrency cases race over two connection pools.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import {
  createMemoryEventLogStore,
  createPrismaEventLogStore,
} from '../../src/store/event-log/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPostgresPrisma, createSqlitePrisma } from '../../src/store/prisma/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { describeEventLogStoreConformance } from './event-log-conformance.js';

describeEventLogStoreConformance('memory', async () => ({
  store: createMemoryEventLogStore(),
  cleanup: async () => undefined,
}));

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-event-log-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let counter = 0;

describeEventLogStoreConformance('prisma sqlite', async () => {
  const path = join(tmpRoot, `db-${++counter}`, 'weft.db');
  await migrate(`file:${path}`);
  const prisma = createSqlitePrisma(path);
  // No second client here: better-sqlite3 is synchronous, so a second connection in the same
  // process waiting on the file lock (busy_timeout) blocks the very thread that would release
  // it. In one process SQLite has one connection and the adapter serialises its transactions;
  // the concurrency cases race through that queue.
  return {
    store: createPrismaEventLogStore(prisma, 'sqlite'),
    cleanup: () => prisma.$disconnect(),
  };
});

describeWithPostgres('event-log store', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.url);
  });
  afterAll(async () => {
    await database?.drop();
  });

  describeEventLogStoreConformance('prisma postgres', async () => {
    const prisma = createPostgresPrisma(database.url);
    const peerPrisma = createPostgresPrisma(database.url);
    return {
      store: createPrismaEventLogStore(prisma, 'postgres'),
      peer: createPrismaEventLogStore(peerPrisma, 'postgres'),
      cleanup: async () => {
        await Promise.all([prisma.$disconnect(), peerPrisma.$disconnect()]);
      },
    };
  });
});
