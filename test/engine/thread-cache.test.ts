/**
 * The engine's thread-state cache, bounded by estimated bytes (cacheBytes / WEFT_CACHE_BYTES):
 * reading more threads than fit keeps the estimate under the bound and evicts the least
 * recently used first; a state estimated above the bound alone is not kept; a thread evicted
 * or never kept reads back from the database exactly as one kept. Real SQLite files throughout.
 */
import { describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import {
  CACHE_ESTIMATE,
  createEngine,
  DEFAULT_CACHE_BYTES,
  type Engine,
} from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { must, openEngine, sqliteBackend, useBackend } from './support.js';

const backend = useBackend(sqliteBackend());

const THREADS = ['t1', 't2', 't3', 't4', 't5'];

/** A thread of a few entries with 2,000-character payloads, so ids and times weigh little. */
async function writeThread(engine: Engine, threadId: string): Promise<void> {
  must(await engine.createThread({ threadId }));
  for (let i = 0; i < 3; i++) {
    const nodes = [0, 1].map((j) => ({
      kind: 'inference' as const,
      payload: { i, j, text: `${threadId}:`.padEnd(2000, 'x') },
    }));
    must(await engine.appendNodes({ threadId, nodes }));
  }
}

/** The estimated size of each thread's state, from an engine that keeps them all. */
async function sizesOf(threads: readonly string[]): Promise<Map<string, number>> {
  const engine = await openEngine(backend);
  const sizes = new Map<string, number>();
  try {
    for (const threadId of threads) {
      const before = engine.cacheStats().bytes;
      await writeThread(engine, threadId);
      sizes.set(threadId, engine.cacheStats().bytes - before);
    }
    expect(engine.cacheStats()).toMatchObject({ evictions: 0, threads: threads.length });
  } finally {
    await engine.close();
  }
  return sizes;
}

const sum = (sizes: Map<string, number>, ids: readonly string[]) =>
  ids.reduce((n, id) => n + sizes.get(id)!, 0);

describe('thread cache bounded by estimated bytes', () => {
  it('holds the most recently used threads that fit, evicting the least recently used first; counts hits, misses and evictions', async () => {
    const sizes = await sizesOf(THREADS);
    // Room for three of these (nearly equal) states, not four.
    const bound = Math.floor(sum(sizes, ['t1', 't2', 't3']) + sizes.get('t1')! / 2);
    expect(bound).toBeLessThan(sum(sizes, ['t1', 't2', 't3', 't4']));
    const engine = await openEngine(backend, { cacheBytes: bound });
    try {
      for (const threadId of THREADS) {
        await writeThread(engine, threadId);
        expect(engine.cacheStats().bytes).toBeLessThanOrEqual(bound);
      }
      // The same commands give the same estimates: the cache holds exactly the last three.
      expect(engine.cacheStats()).toMatchObject({
        bytes: sum(sizes, ['t3', 't4', 't5']),
        maxBytes: bound,
        threads: 3,
        evictions: 2,
        oversized: 0,
        misses: 0,
      });
      const { hits } = engine.cacheStats();

      // t3 is the least recently used one held: reading it makes it the most recent.
      must(await engine.getState('t3'));
      expect(engine.cacheStats()).toMatchObject({ hits: hits + 1, misses: 0 });
      // t1 was evicted: it is replayed from the database, kept, and t4 goes to make room.
      expect(must(await engine.getState('t1')).length).toBe(4);
      expect(engine.cacheStats()).toMatchObject({ misses: 1, evictions: 3, threads: 3 });
      must(await engine.getState('t3'));
      expect(engine.cacheStats()).toMatchObject({ hits: hits + 2, misses: 1 });
      must(await engine.getState('t4'));
      expect(engine.cacheStats()).toMatchObject({ misses: 2, evictions: 4 });
      expect(engine.cacheStats().bytes).toBe(sum(sizes, ['t1', 't3', 't4']));
    } finally {
      await engine.close();
    }
  });

  it('does not keep a state estimated above the bound on its own, yet answers it and writes on it', async () => {
    const engine = await openEngine(backend, { cacheBytes: 5_000 });
    try {
      must(await engine.createThread({ threadId: 'big' }));
      // The new thread fits; once a 4,000-character payload is folded in, it no longer does.
      expect(engine.cacheStats()).toMatchObject({ threads: 1, oversized: 0 });
      const payload = { text: 'z'.repeat(4000) };
      must(await engine.appendNodes({ threadId: 'big', nodes: [{ kind: 'system', payload }] }));
      // Its older state is dropped too: a cached state is answered as current.
      expect(engine.cacheStats()).toMatchObject({ threads: 0, bytes: 0, oversized: 1 });
      const written = must(
        await engine.appendNodes({
          threadId: 'big',
          expectedIndex: 2,
          nodes: [{ kind: 'system', payload: { after: true } }],
        }),
      );
      expect(written.logLength).toBe(3);
      const state = must(await engine.getState('big'));
      expect(state.length).toBe(3);
      expect(state.graph.count).toBe(2);
      expect(engine.cacheStats()).toMatchObject({ threads: 0, bytes: 0, evictions: 0 });
      expect(engine.cacheStats().misses).toBeGreaterThanOrEqual(2);
    } finally {
      await engine.close();
    }
  });

  it('a thread evicted and read again from the database has the state of one never evicted', async () => {
    const url = await backend.freshUrl();
    const options = {
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
    };
    // Room for about one thread: every read of another thread evicts.
    const small = createEngine({ ...options, store: openThreadStore(url), cacheBytes: 40_000 });
    try {
      for (const threadId of THREADS) await writeThread(small, threadId);
      must(await small.forkThread({ threadId: 't2', upToIndex: 3, newThreadId: 'f2' }));
      must(await small.appendNodes({ threadId: 't1', nodes: [{ kind: 'answer', payload: 1 }] }));
      expect(small.cacheStats().evictions).toBeGreaterThan(0);
      const roomy = createEngine({ store: openThreadStore(url) });
      try {
        for (const threadId of [...THREADS, 'f2']) {
          const evicted = must(await small.getState(threadId));
          const fresh = must(await roomy.getState(threadId));
          expect(evicted.length).toBe(fresh.length);
          expect(evicted.stateHash).toBe(fresh.stateHash);
          expect(evicted.graph.count).toBe(fresh.graph.count);
          expect(small.cacheStats().bytes).toBeLessThanOrEqual(40_000);
        }
        expect(must(await roomy.getState('t1')).graph.count).toBe(7);
      } finally {
        await roomy.close();
      }
    } finally {
      await small.close();
    }
  });

  it('estimates a state the same whether built by commits (create, append, fork, import) or loaded from the log', async () => {
    const writer = await openEngine(backend);
    const reader = createEngine({ store: openThreadStore(writer.url) });
    try {
      await writeThread(writer, 'w');
      must(await writer.forkThread({ threadId: 'w', upToIndex: 2, newThreadId: 'wf' }));
      const exported = must(await writer.stateAt('w')).agentState;
      must(await writer.importState({ threadId: 'wi', state: exported }));
      const threads = ['w', 'wi'];
      const built = writer.cacheStats();
      expect(built.threads).toBe(threads.length + 1);
      // A fork shares its source's history: built, it is the state its one entry and its nodes
      // make (the nodes' storage is the source's); loaded, the fold of its whole log.
      const forkNodes = must(await writer.getState('wf')).graph.count;
      const forkText = (await writer.store.readEntryTexts('wf', 2)).join('');
      const forkBuilt =
        forkText.length * CACHE_ESTIMATE.bytesPerTextChar + forkNodes * CACHE_ESTIMATE.bytesPerNode;
      for (const threadId of threads) must(await reader.getState(threadId));
      expect(reader.cacheStats()).toMatchObject({
        bytes: built.bytes - forkBuilt,
        threads: threads.length,
      });
      // The estimate is the stored text times the factor, plus the per-node cost.
      const texts = (await writer.store.readEntryTexts('w')).join('');
      const nodes = must(await writer.getState('w')).graph.count;
      expect(nodes).toBe(6);
      const single = createEngine({ store: openThreadStore(writer.url) });
      try {
        must(await single.getState('w'));
        expect(single.cacheStats().bytes).toBe(
          texts.length * CACHE_ESTIMATE.bytesPerTextChar + nodes * CACHE_ESTIMATE.bytesPerNode,
        );
      } finally {
        await single.close();
      }
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('is bounded by 256 MiB by default', async () => {
    const engine = await openEngine(backend);
    try {
      expect(DEFAULT_CACHE_BYTES).toBe(268_435_456);
      expect(engine.cacheStats()).toEqual({
        bytes: 0,
        maxBytes: DEFAULT_CACHE_BYTES,
        threads: 0,
        hits: 0,
        misses: 0,
        evictions: 0,
        oversized: 0,
      });
      // Tenant views share the one cache.
      must(await engine.forTenant('acme').createThread({ threadId: 'a' }));
      expect(engine.cacheStats().threads).toBe(1);
      expect(engine.forTenant('acme').cacheStats()).toEqual(engine.cacheStats());
    } finally {
      await engine.close();
    }
  });
});
