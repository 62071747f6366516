/**
 * Runs the event-log store conformance suite on the in-memory reference store and on the
 * production log store (createLogStore over the thread store the engine writes through) on
 * SQLite (a fresh, migrated file per test) and Postgres (a fresh, migrated database per suite;
 * skipped with a printed reason when Postgres is absent, failing under REQUIRE_POSTGRES=1). The
 * fixtures hand the suite a second store with its own writer (on SQLite, its own writer thread;
 * on Postgres, its own pool), so the concurrency cases race across two writers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createLogStore, createMemoryEventLogStore } from '../../src/store/event-log/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
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

/** Two production log stores on `url`, each on a thread store (and writer) of its own. */
const productionStores = (url: string) => {
  const stores = [openThreadStore(url), openThreadStore(url)];
  return {
    store: createLogStore(stores[0]!),
    peer: createLogStore(stores[1]!),
    cleanup: async () => {
      await Promise.all(stores.map((s) => s.close()));
    },
  };
};

describeEventLogStoreConformance('production log store on sqlite', async () => {
  const url = `file:${join(tmpRoot, `db-${++counter}`, 'weft.db')}`;
  await migrate(url);
  return productionStores(url);
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

  describeEventLogStoreConformance('production log store on postgres', async () =>
    productionStores(database.url),
  );
});
