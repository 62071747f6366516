/**
 * LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation,
 * library form) against WeftSaver on SQLite and on Postgres, in full: no case is filtered out,
 * and WeftSaver is not one of the savers the suite skips cases for. Plus its opt-in cases of
 * `getDeltaChannelHistory` (the inherited walk over WeftSaver's storage).
 */
import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import * as vitest from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { weftSaverInitializer } from './initializer.js';

// The suite is written against vitest's globals; this project imports them explicitly.
Object.assign(globalThis, {
  describe: vitest.describe,
  it: vitest.it,
  test: vitest.test,
  expect: vitest.expect,
  beforeAll: vitest.beforeAll,
  afterAll: vitest.afterAll,
  beforeEach: vitest.beforeEach,
  afterEach: vitest.afterEach,
});

/** The opt-in cases do not run the initializer's setup themselves (validate's specTest does). */
function deltaHistory(initializer: ReturnType<typeof weftSaverInitializer>): void {
  vitest.describe('getDeltaChannelHistory', () => {
    vitest.beforeAll(() => initializer.beforeAll?.(), 60_000);
    vitest.afterAll(() => initializer.afterAll?.());
    deltaChannelHistoryTests(initializer);
  });
}

vitest.describe('LangGraph checkpointer validation [sqlite]', () => {
  validate(weftSaverInitializer('sqlite'));
  deltaHistory(weftSaverInitializer('sqlite'));
});

describeWithPostgres('LangGraph checkpointer validation', () => {
  validate(weftSaverInitializer('postgres'));
  deltaHistory(weftSaverInitializer('postgres'));
});
