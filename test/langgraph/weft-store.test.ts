/**
 * What WeftStore adds to LangGraph's store, on SQLite and Postgres: every version with the thread
 * and run that wrote it, expiry with refresh on read and a sweep, tenants, redaction, and several
 * processes (stores) on one database seeing each other's writes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, type LangGraphRunnableConfig, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver, WeftStore } from '../../src/langgraph/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

/** Waits until `condition` holds (checked every 10 ms), failing after `ms`. */
async function until(condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const State = Annotation.Root({ tone: Annotation<string> });

function suite(backendName: 'sqlite' | 'postgres') {
  const backend: Backend = backendName === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine;
  let n = 0;
  const tenant = () => engine.forTenant(`store-${++n}`);

  beforeAll(async () => {
    engine = await openEngine(await backend.freshUrl());
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  it('records which LangGraph thread and Weft run wrote each version, oldest first', async () => {
    const scoped = tenant();
    const saver = new WeftSaver({ engine: scoped });
    const store = new WeftStore({ engine: scoped });
    const graph = new StateGraph(State)
      .addNode('remember', async (s: typeof State.State, config: LangGraphRunnableConfig) => {
        // LangGraph's own handle reads what the store holds; the store itself writes with provenance.
        const before = await config.store!.get(['users', 'ada'], 'tone');
        await store.put(['users', 'ada'], 'tone', {
          tone: s.tone,
          was: before?.value.tone ?? null,
        });
        return {};
      })
      .addEdge(START, 'remember')
      .compile({ checkpointer: saver, store });
    const config = { configurable: { thread_id: 'chat-1' } };
    await graph.invoke({ tone: 'concise' }, config);
    await graph.invoke({ tone: 'playful' }, config);
    await store.delete(['users', 'ada'], 'tone');

    const history = await store.history(['users', 'ada'], 'tone');
    expect(history.map((v) => v.value)).toEqual([
      { tone: 'concise', was: null },
      { tone: 'playful', was: 'concise' },
      null,
    ]);
    const state = await scoped.getState(saver.weftThreadId(config));
    if (!state.ok) throw new Error(state.error.message);
    const runs = [...state.value.runs.keys()];
    expect(runs).toHaveLength(2);
    expect(history[0]!.writtenBy).toMatchObject({
      langgraphThreadId: 'chat-1',
      threadId: saver.weftThreadId(config),
      runId: runs[0],
    });
    expect(history[1]!.writtenBy?.runId).toBe(runs[1]);
    expect(history[2]!.writtenBy, 'written outside a graph').toBeUndefined();
    expect(history[0]!.logIndex).toBeLessThan(history[1]!.logIndex);
  });

  it('an expired item is gone from get, search and the namespace list; a sweep deletes it', async () => {
    const store = new WeftStore({ engine: tenant(), ttl: { refreshOnRead: false } });
    await store.put(['s'], 'short', { v: 1 }, undefined, { ttl: 0.002 });
    await store.put(['s'], 'long', { v: 2 }, undefined, { ttl: 60 });
    await until(async () => (await store.get(['s'], 'short')) === null);
    expect((await store.search(['s'])).map((i) => i.key)).toEqual(['long']);
    expect(await store.sweepExpired()).toBe(1);
    expect((await store.history(['s'], 'short')).map((v) => v.value)).toEqual([{ v: 1 }, null]);
    expect(await store.sweepExpired(), 'nothing left to sweep').toBe(0);
    await expect(store.put(['s'], 'bad', { v: 1 }, undefined, { ttl: -1 })).rejects.toThrow(
      'ttl must be a positive number',
    );
  });

  it('a read extends the expiry once a tenth of the TTL has passed, keeping updatedAt', async () => {
    const store = new WeftStore({ engine: tenant(), ttl: { defaultTtl: 0.05 } });
    await store.put(['r'], 'k', { v: 1 });
    const put = await store.get(['r'], 'k', { refreshTtl: false });
    expect(await store.history(['r'], 'k')).toHaveLength(1);
    await until(() => Date.now() - put!.updatedAt.getTime() > 0.05 * 60_000 * 0.1);
    expect(await store.get(['r'], 'k', { refreshTtl: false })).not.toBeNull();
    expect(await store.history(['r'], 'k'), 'refreshTtl: false writes nothing').toHaveLength(1);
    const read = await store.get(['r'], 'k');
    const versions = await store.history(['r'], 'k');
    expect(versions.map((v) => v.value)).toEqual([{ v: 1 }, { v: 1 }]);
    const after = await store.get(['r'], 'k', { refreshTtl: false });
    expect(after!.updatedAt.getTime()).toBe(read!.updatedAt.getTime());
    expect(after!.updatedAt.getTime()).toBe(put!.updatedAt.getTime());
  });

  it('keeps tenants apart', async () => {
    const a = new WeftStore({ engine: tenant() });
    const b = new WeftStore({ engine: tenant() });
    await a.put(['shared', 'name'], 'k', { owner: 'a' });
    expect(await b.get(['shared', 'name'], 'k')).toBeNull();
    expect(await b.listNamespaces()).toEqual([]);
    expect(await b.search([])).toEqual([]);
  });

  it('a redacted version reads as absent, in this store and in a fresh one', async () => {
    const scoped = tenant();
    const store = new WeftStore({ engine: scoped });
    await store.put(['pii'], 'card', { number: '4111 1111 1111 1111' });
    const [version] = await store.history(['pii'], 'card');
    const redacted = await scoped.redactNodes({
      threadId: store.threadId,
      nodeIds: [version!.nodeId],
      reason: 'card number',
    });
    expect(redacted.ok).toBe(true);
    expect(await store.get(['pii'], 'card')).toBeNull();
    expect(await new WeftStore({ engine: scoped }).get(['pii'], 'card')).toBeNull();
    expect(JSON.stringify(await store.search([]))).not.toContain('4111');
  });

  it('stores on one database see each other’s writes (as processes would)', async () => {
    const scoped = tenant();
    const first = new WeftStore({ engine: scoped });
    const second = new WeftStore({ engine: scoped });
    await first.put(['p'], 'k', { v: 1 });
    expect((await second.get(['p'], 'k'))!.value).toEqual({ v: 1 });
    await second.delete(['p'], 'k');
    expect(await first.get(['p'], 'k')).toBeNull();
    await Promise.all([first.put(['p'], 'a', { v: 'a' }), second.put(['p'], 'b', { v: 'b' })]);
    expect((await first.search(['p'])).map((i) => i.key).sort()).toEqual(['a', 'b']);
  });
}

describe('WeftStore [sqlite]', () => {
  suite('sqlite');

  it('with an encryption key, no item value is on disk in the clear', async () => {
    const root = mkdtempSync(join(tmpdir(), 'weft-store-sealed-'));
    try {
      const url = `file:${join(root, 'sealed.db')}`;
      await migrate(url);
      const marker = `secret-${randomBytes(8).toString('hex')}`;
      const engine = await openEngine(url, { storeOptions: { encryptionKey: randomBytes(32) } });
      const store = new WeftStore({ engine });
      await store.put(['users', 'ada'], 'note', { text: marker });
      expect((await store.get(['users', 'ada'], 'note'))!.value).toEqual({ text: marker });
      await engine.close();
      for (const name of readdirSync(root)) {
        expect(readFileSync(join(root, name)).includes(marker), name).toBe(false);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
describeWithPostgres('WeftStore', () => suite('postgres'));
