/**
 * The initializer LangGraph's checkpointer validation suite runs WeftSaver with: one engine per
 * backend for the whole suite (a fresh SQLite file or Postgres database), and a fresh tenant of
 * it per checkpointer, so each case sees only its own threads (the suite lists across threads
 * and expects exactly what it wrote) without paying for a database per case.
 */
import type { CheckpointSaverTestInitializer } from '@langchain/langgraph-checkpoint-validation';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';

export function weftSaverInitializer(
  backendName: 'sqlite' | 'postgres',
): CheckpointSaverTestInitializer<WeftSaver> {
  const backend: Backend = backendName === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine | undefined;
  let tenants = 0;
  return {
    checkpointerName: `WeftSaver on ${backendName}`,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      engine = await openEngine(await backend.freshUrl());
    },
    async afterAll() {
      await engine?.close();
      await backend.cleanup();
    },
    createCheckpointer() {
      if (engine === undefined) throw new Error('the suite did not run beforeAll');
      return new WeftSaver({ engine: engine.forTenant(`validation-${++tenants}`) });
    },
  };
}
