/**
 * The store column of `npm run bench -- peers` (`--only=store` runs it alone; `--store-items=N`,
 * default 10,000): LangGraph's long-term memory stores side by side — WeftStore on SQLite and on
 * Postgres, LangGraph's PostgresStore, and its InMemoryStore (the floor: no database at all).
 * Per store: putting N items (in batches of 100, one round trip each), one put on its own (p50
 * of 200), a filtered search and a semantic search at N items (p50 of 50), and the first search
 * of a freshly opened store (what a new process pays). PostgresStore has no semantic search here:
 * it needs pgvector, which this environment's Postgres does not have.
 */
import { performance } from 'node:perf_hooks';
import { Embeddings } from '@langchain/core/embeddings';
import {
  type BaseStore,
  type IndexConfig,
  InMemoryStore,
  type PutOperation,
} from '@langchain/langgraph-checkpoint';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import { openEngine } from '../../src/engine/index.js';
import { WeftStore } from '../../src/langgraph/index.js';
import { postgresUnavailable, type Scratch, scratchPostgres, scratchSqlite } from './databases.js';
import { formatMs } from './report.js';

const DIMS = 64;
const BATCH = 100;

/** Deterministic embeddings: each word hashed into one of DIMS dimensions. */
class HashEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((t) => this.vector(t));
  }
  async embedQuery(text: string): Promise<number[]> {
    return this.vector(text);
  }
  private vector(text: string): number[] {
    const v = new Array<number>(DIMS).fill(0);
    for (const word of text.toLowerCase().split(/\W+/)) {
      let h = 2166136261;
      for (let i = 0; i < word.length; i += 1) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
      v[(h >>> 0) % DIMS]! += 1;
    }
    return v;
  }
}

const WORDS = ['tea', 'coffee', 'concise', 'verbose', 'dark', 'light', 'metric', 'imperial'];
const item = (i: number): PutOperation => ({
  namespace: ['users', `u${i % 100}`],
  key: `pref-${i}`,
  value: { kind: `k${i % 10}`, n: i, text: `${WORDS[i % 8]} ${WORDS[(i * 7) % 8]} note ${i}` },
});

interface StoreRow {
  name: string;
  putAllMs?: number;
  putOneMs?: number;
  filterMs?: number;
  semanticMs?: number | string;
  freshMs?: number;
  skipped?: string;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timeEach(times: number, run: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    await run(i);
    samples.push(performance.now() - started);
  }
  return p50(samples);
}

interface Candidate {
  name: string;
  open: (index: IndexConfig | undefined) => Promise<BaseStore>;
  semantic: boolean;
  close: () => Promise<void>;
}

async function measure(candidate: Candidate, items: number): Promise<StoreRow> {
  const index: IndexConfig = { dims: DIMS, embeddings: new HashEmbeddings(), fields: ['text'] };
  const store = await candidate.open(candidate.semantic ? index : undefined);
  const started = performance.now();
  for (let i = 0; i < items; i += BATCH) {
    const ops = Array.from({ length: Math.min(BATCH, items - i) }, (_, j) => item(i + j));
    await store.batch(ops);
  }
  const putAllMs = performance.now() - started;
  const putOneMs = await timeEach(200, (i) => {
    const op = item(items + i);
    return store.put(op.namespace, op.key, op.value!);
  });
  const filterMs = await timeEach(50, (i) =>
    store.search(['users'], { filter: { kind: `k${i % 10}` }, limit: 10 }),
  );
  const semanticMs = candidate.semantic
    ? await timeEach(50, (i) =>
        store.search(['users'], { query: `${WORDS[i % 8]} note`, limit: 10 }),
      )
    : 'needs pgvector';
  const fresh = await candidate.open(candidate.semantic ? index : undefined);
  const freshStarted = performance.now();
  await fresh.search(['users'], { filter: { kind: 'k3' }, limit: 10 });
  const freshMs = performance.now() - freshStarted;
  return { name: candidate.name, putAllMs, putOneMs, filterMs, semanticMs, freshMs };
}

async function weftCandidate(backend: 'sqlite' | 'postgres', scratch: Scratch): Promise<Candidate> {
  const url = backend === 'sqlite' ? `file:${scratch.location}` : scratch.location;
  const engines: Array<{ close(): Promise<void> }> = [];
  return {
    name: `WeftStore (${backend})`,
    semantic: true,
    open: async (index) => {
      const engine = await openEngine(url);
      engines.push(engine);
      return new WeftStore({ engine, ...(index === undefined ? {} : { index }) });
    },
    close: async () => {
      for (const e of engines) await e.close();
      await scratch.drop();
    },
  };
}

function postgresStoreCandidate(scratch: Scratch): Candidate {
  const stores: PostgresStore[] = [];
  return {
    name: 'PostgresStore',
    semantic: false,
    open: async () => {
      const store = PostgresStore.fromConnString(scratch.location);
      await store.setup();
      stores.push(store);
      return store;
    },
    close: async () => {
      for (const s of stores) await s.stop();
      await scratch.drop();
    },
  };
}

function inMemoryCandidate(): Candidate {
  let shared: InMemoryStore | undefined;
  return {
    name: 'InMemoryStore (floor)',
    semantic: true,
    // A "fresh" in-memory store is the same one: it has no database to read from.
    open: async (index) => {
      shared ??= index === undefined ? new InMemoryStore() : new InMemoryStore({ index });
      return shared;
    },
    close: async () => undefined,
  };
}

export async function runStoreColumn(items: number): Promise<void> {
  console.log(
    `\nLangGraph stores at ${items.toLocaleString('en-US')} items (${DIMS}-dim vectors):`,
  );
  const unavailable = await postgresUnavailable();
  const candidates: Array<() => Promise<Candidate>> = [
    async () => inMemoryCandidate(),
    () => weftCandidate('sqlite', scratchSqlite('store')),
  ];
  if (unavailable === undefined) {
    candidates.push(async () => weftCandidate('postgres', await scratchPostgres()));
    candidates.push(async () => postgresStoreCandidate(await scratchPostgres()));
  }
  const rows: StoreRow[] = [];
  for (const make of candidates) {
    const candidate = await make();
    try {
      rows.push(await measure(candidate, items));
    } finally {
      await candidate.close();
    }
  }
  if (unavailable !== undefined) rows.push({ name: 'Postgres rows', skipped: unavailable });
  printRows(rows, items);
}

function printRows(rows: readonly StoreRow[], items: number): void {
  const header = [
    'store',
    `put ${items.toLocaleString('en-US')} (batches of ${BATCH})`,
    'one put (p50)',
    'filtered search (p50)',
    'semantic search (p50)',
    'first search, fresh store',
  ];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map(() => '---').join(' | ')} |`);
  for (const r of rows) {
    if (r.skipped !== undefined) {
      console.log(`| ${r.name} | skipped: ${r.skipped} |`);
      continue;
    }
    const semantic = typeof r.semanticMs === 'number' ? formatMs(r.semanticMs) : r.semanticMs;
    console.log(
      `| ${r.name} | ${formatMs(r.putAllMs!)} | ${formatMs(r.putOneMs!)} | ${formatMs(r.filterMs!)} | ${semantic} | ${formatMs(r.freshMs!)} |`,
    );
  }
}
