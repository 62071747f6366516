import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import {
  createEngine,
  type Engine,
  type EngineOptions,
  projectLog,
} from '../../src/engine/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { createTestDatabase, type TestDatabase } from '../support/services.js';

/** Where a backend's fresh databases come from; `cleanup` drops them all. */
export interface Backend {
  name: 'sqlite' | 'postgres';
  freshUrl(): Promise<string>;
  cleanup(): Promise<void>;
}

/** SQLite files in a fresh directory under `parent` (default: the OS temp directory). */
export function sqliteBackend(parent = tmpdir()): Backend {
  let root: string | undefined;
  let n = 0;
  return {
    name: 'sqlite',
    async freshUrl() {
      root ??= mkdtempSync(join(parent, 'weft-test-'));
      const url = `file:${join(root, `db-${++n}.db`)}`;
      await migrate(url);
      return url;
    },
    async cleanup() {
      if (root !== undefined) rmSync(root, { recursive: true, force: true });
    },
  };
}

export function postgresBackend(): Backend {
  const databases: TestDatabase[] = [];
  return {
    name: 'postgres',
    async freshUrl() {
      const db = await createTestDatabase();
      databases.push(db);
      await migrate(db.url);
      return db.url;
    },
    async cleanup() {
      await Promise.all(databases.splice(0).map((db) => db.drop()));
    },
  };
}

/** Frees a backend's databases after the file's tests. */
export function useBackend(backend: Backend): Backend {
  afterAll(() => backend.cleanup());
  return backend;
}

/** An engine on a fresh database with a simulated clock and sequential ids. */
export type TestEngine = Engine & { url: string };

export async function openEngine(
  backend: Backend,
  options: Partial<EngineOptions> = {},
): Promise<TestEngine> {
  const url = await backend.freshUrl();
  const engine = createEngine({
    store: openThreadStore(url),
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds('id'),
    ...options,
  });
  return Object.assign(engine, { url });
}

export function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

export function failure<T>(result: Result<T>) {
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error;
}

/**
 * Rebuilds the read models of the given threads of `source` (default: all) by replaying their
 * stored logs into the (empty, migrated) database behind `target`, one transaction per thread.
 */
export async function rebuildInto(
  source: ThreadStore,
  target: ThreadStore,
  threadIds?: readonly string[],
): Promise<void> {
  const ids = threadIds ?? (await source.dumpReadModels()).thread.map((t) => t.id as string);
  for (const threadId of ids) {
    const projected = must(projectLog(threadId, await source.readEntries(threadId)));
    must(await target.commit(projected.changes!));
  }
}

/** Row counts of every table an engine writes, and the log lengths: what "writes nothing" keeps. */
export async function footprint(store: ThreadStore) {
  const dump = await store.dumpReadModels();
  const counts = Object.fromEntries(Object.entries(dump).map(([k, rows]) => [k, rows.length]));
  const lengths = Object.fromEntries(dump.thread.map((t) => [t.id as string, t.logLength]));
  return { counts, lengths, dump };
}
