/**
 * Calibrates the thread cache's size estimate (CACHE_ESTIMATE in src/engine/thread-cache.ts):
 * writes one thread of 10,000 nodes per payload shape to a temporary SQLite file, then folds
 * COPIES independent states of it (each from its own parsed log, as the engine's loader does),
 * holds them, and compares the heap they take (heapUsed after a full GC, before and after) with
 * the cache's estimate of them.
 *
 *   node --expose-gc --import tsx scripts/measure-thread-cache.ts
 *
 * Run on Node 20.20 (2 cores, 2026-05) with CACHE_ESTIMATE at 2 bytes per character and 300
 * per node, the figures were (per state; text: its log's canonical characters):
 *
 *   shape         nodes  text chars   heap/state   estimate/state   heap ÷ estimate
 *   tiny          10000     1219601       3.5 MB           5.4 MB   0.64
 *   200 chars     10000     3319605       5.4 MB           9.6 MB   0.56
 *   2,000 chars   10000    21339606      23.6 MB          45.7 MB   0.52
 *   structured    10000     2627387       6.6 MB           8.3 MB   0.80
 *   small ints    10000     2130716       7.0 MB           7.3 MB   0.96
 *   unicode       10000     3319604       7.2 MB           9.6 MB   0.75
 *   semantic      10000     1980734       3.8 MB           7.0 MB   0.55
 *   runs           4000     3677742       4.4 MB           8.6 MB   0.51
 *
 * ASCII text costs about 1 heap byte per character, two-byte text about 2, dense small numbers
 * and objects 2.5–3.5; a node about 230 bytes beyond its text. The estimate errs high on every
 * shape (states take 0.5–0.96 of it), so a bound of WEFT_CACHE_BYTES keeps the heap the states
 * take under it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Result } from '../src/core/errors.js';
import type { JsonValue } from '../src/core/json.js';
import type { NodeInput, ThreadState } from '../src/core/thread/index.js';
import { type Engine, openEngine } from '../src/engine/index.js';
import { createThreadCache, createThreadLoader } from '../src/engine/thread-cache.js';

const NODES = 10_000;
const PER_ENTRY = 100;
const RUNS = 2_000;
const COPIES = 20;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (see the comment at the top)');

type Shape = (i: number) => Pick<NodeInput, 'kind' | 'payload' | 'resourceKey'>;

const nodeShapes: Record<string, Shape> = {
  tiny: (i) => ({ kind: 'inference', payload: { i } }),
  '200 chars': (i) => ({ kind: 'inference', payload: { i, text: 'x'.repeat(200) } }),
  '2,000 chars': (i) => ({ kind: 'tool_result', payload: { i, text: 'y'.repeat(2000) } }),
  structured: (i) => ({
    kind: 'tool_call',
    payload: {
      name: 'search',
      args: { q: `q${i}`, limit: 10, weights: [0.5, 1.5, 2.25], flags: { a: true, b: null } },
      meta: [
        { k: 'x', v: i },
        { k: 'y', v: i + 0.5 },
      ],
    },
  }),
  'small ints': (i) => ({
    kind: 'inference',
    payload: Array.from({ length: 50 }, (_, j) => (i + j) % 10),
  }),
  unicode: (i) => ({ kind: 'inference', payload: { i, text: 'é✓'.repeat(100) } }),
  semantic: (i) => ({
    kind: 'semantic',
    payload: { type: 'memory', key: `k${i % 500}`, content: `fact ${i}` } as JsonValue,
    resourceKey: `semantic:memory:k${i % 500}`,
  }),
};

/** Writes one measured thread: 10,000 nodes of a shape, or runs with a few actions each. */
async function write(engine: Engine, threadId: string, shape: Shape | 'runs'): Promise<void> {
  const must = <T>(r: Result<T>): T => {
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  };
  must(await engine.createThread({ threadId }));
  if (shape === 'runs') {
    // 2,000 runs (a goal node each), each with a memory update (a mirror node) and a status.
    for (let i = 0; i < RUNS; i++) {
      const { runId } = must(await engine.startRun({ threadId, goal: `goal ${i}` }));
      const update = { type: 'update_memory', payload: { updates: { [`k${i}`]: `v${i}` } } };
      must(await engine.dispatch({ runId, action: update }));
      const done = { type: 'set_status', payload: { status: 'completed' } };
      must(await engine.dispatch({ runId, action: done }));
    }
    return;
  }
  for (let start = 0; start < NODES; start += PER_ENTRY) {
    const nodes = Array.from({ length: PER_ENTRY }, (_, j) => shape(start + j) as NodeInput);
    must(await engine.appendNodes({ threadId, nodes }));
  }
}

function heapUsed(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const root = mkdtempSync(join(tmpdir(), 'weft-measure-'));
try {
  const engine = await openEngine(`file:${join(root, 'measure.db')}`, { snapshots: false });
  console.log('shape         nodes  text chars   heap/state   estimate/state   heap ÷ estimate');
  const shapes: Array<[string, Shape | 'runs']> = [...Object.entries(nodeShapes), ['runs', 'runs']];
  for (const [name, shape] of shapes) {
    const threadId = `t-${name.replace(/\W/g, '')}`;
    await write(engine, threadId, shape);
    const texts = await engine.store.readEntryTexts(threadId);
    const chars = texts.reduce((n, t) => n + t.length, 0);
    const held: ThreadState[] = [];
    const caches = Array.from({ length: COPIES }, () => createThreadCache(Number.MAX_SAFE_INTEGER));
    const before = heapUsed();
    for (const cache of caches) {
      const loaded = await createThreadLoader(engine.store, cache, {})(threadId);
      if (!loaded.ok) throw new Error(loaded.error.message);
      held.push(loaded.value);
    }
    const after = heapUsed();
    const heap = (after - before) / COPIES;
    const estimate = caches.reduce((n, c) => n + c.stats().bytes, 0) / COPIES;
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    console.log(
      `${name.padEnd(12)} ${String(held[0]!.graph.count).padStart(6)} ${String(chars).padStart(11)}` +
        `   ${mb(heap).padStart(10)}   ` +
        `${mb(estimate).padStart(14)}   ${(heap / estimate).toFixed(2)}`,
    );
    held.length = 0;
  }
  await engine.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
