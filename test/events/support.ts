import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Result } from '../../src/core/errors.js';
import { createEngine, type Engine, type EngineOptions } from '../../src/engine/index.js';
import { createEventHub, type EventHub, type EventHubOptions } from '../../src/events/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { REDIS_URL } from '../support/services.js';

/** An engine publishing to a hub, on one database. */
export interface Node {
  engine: Engine;
  hub: EventHub;
  close(): Promise<void>;
}

/** Fresh migrated databases of one backend; `cleanup` removes them. */
export interface Databases {
  fresh(): Promise<string>;
  cleanup(): Promise<void>;
}

/**
 * Real SQLite files, on tmpfs when there is one: these tests append tens of thousands of entries
 * and measure delivery, not fsync (synchronous=FULL costs ~10 ms per commit on a busy disk).
 */
function scratchRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

const databasesOf = (backend: Backend): Databases => ({
  fresh: () => backend.freshUrl(),
  cleanup: () => backend.cleanup(),
});

export const sqliteDatabases = (): Databases => databasesOf(sqliteBackend(scratchRoot()));

export const postgresDatabases = (): Databases => databasesOf(postgresBackend());

/**
 * An engine and its hub on `url` (each node opens its own store, as a separate instance would).
 * `redis: true` fans out through the test Redis on a channel private to the test.
 */
export async function openNode(
  url: string,
  options: {
    channel?: string;
    hub?: Partial<EventHubOptions>;
    engine?: Partial<EngineOptions>;
  } = {},
): Promise<Node> {
  const store = openThreadStore(url);
  const hub = createEventHub({
    store,
    ...(options.channel === undefined
      ? {}
      : { redis: { url: REDIS_URL, channel: options.channel, pollIntervalMs: 200 } }),
    ...options.hub,
  });
  await hub.ready;
  const engine = createEngine({ store, publisher: hub, ...options.engine });
  return {
    engine,
    hub,
    async close() {
      await hub.close();
      await engine.close();
    },
  };
}

export function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Appends `count` single-node commits to a thread, one after another. */
export async function appendMany(engine: Engine, threadId: string, count: number, tag = 'n') {
  for (let i = 0; i < count; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'inference', payload: { tag, i } }],
      }),
    );
  }
}

/** Reads `count` items from an iterator, then returns it. */
export async function take<T>(iterator: AsyncIterableIterator<T>, count: number): Promise<T[]> {
  const out: T[] = [];
  if (count === 0) return out;
  for await (const item of iterator) {
    out.push(item);
    if (out.length >= count) break;
  }
  return out;
}

/** A small seeded PRNG (mulberry32): failures print their seed and replay exactly. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);
