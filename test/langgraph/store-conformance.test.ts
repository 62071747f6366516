/**
 * The store conformance suite (store-conformance/suite.ts) against LangGraph's InMemoryStore, the
 * reference, and against WeftStore on SQLite and on Postgres, in one run; the counts are printed
 * side by side at the end.
 */
import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftStore } from '../../src/langgraph/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';
import { type StoreFactory, storeConformance, tally } from './store-conformance/suite.js';

storeConformance(
  'InMemoryStore',
  async ({ index }) => (index === undefined ? new InMemoryStore() : new InMemoryStore({ index })),
  { reference: true },
);

/** WeftStore on one backend: one engine, and a tenant of its own (an empty store) per case. */
function weftStore(backendName: 'sqlite' | 'postgres'): StoreFactory {
  const backend: Backend = backendName === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine;
  let n = 0;
  beforeAll(async () => {
    engine = await openEngine(await backend.freshUrl());
  });
  afterAll(async () => {
    await engine?.close();
    await backend.cleanup();
  });
  return async ({ index }) =>
    new WeftStore({
      engine: engine.forTenant(`conformance-${++n}`),
      ...(index === undefined ? {} : { index }),
    });
}

describe('WeftStore [sqlite]', () => storeConformance('WeftStore [sqlite]', weftStore('sqlite')));
describeWithPostgres('WeftStore', () =>
  storeConformance('WeftStore [postgres]', weftStore('postgres')),
);

afterAll(() => {
  const rows = [...tally.entries()].map(
    ([name, c]) =>
      `  ${name.padEnd(22)} ${String(c.passed).padStart(3)} passed  ${c.failed} failed  of ${c.cases} (${c.cases - c.beyond} shared with the reference, ${c.beyond} beyond it)`,
  );
  console.log(`store conformance, side by side:\n${rows.join('\n')}`);
});
