import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine, projectLog } from '../../src/engine/index.js';
import {
  openThreadStore,
  type ThreadStore,
  type ThreadStoreOptions,
} from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import { comparable, expectedReadModels, sortedLikeDump } from './oracle.js';
import {
  type Backend,
  failure,
  must,
  postgresBackend,
  rebuildInto,
  sqliteBackend,
  useBackend,
} from './support.js';

/**
 * Group commit: concurrent commits share one transaction, each in its own
 * SAVEPOINT; every caller gets its own result, a failing commit fails alone, and nothing is
 * acknowledged before the shared transaction committed.
 */
function suite(backend: Backend) {
  const closing: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((c) => c.close()));
  });

  /** A grouped store (the SQLite default; opted into on Postgres) and an engine on it. */
  const open = async (groupCommit: ThreadStoreOptions['groupCommit'] = true) => {
    const url = await backend.freshUrl();
    const store = openThreadStore(url, { groupCommit });
    const engine = engineOn(store, 'id');
    closing.push(engine);
    return { url, store, engine };
  };
  const engineOn = (store: ThreadStore, prefix: string) =>
    createEngine({
      store,
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds(prefix),
    });

  const createThreads = async (engine: Engine, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(must(await engine.createThread({})).threadId);
    return ids;
  };

  /** The stored read models equal the core's oracle and a replay of the log into an empty database. */
  const expectConsistent = async (engine: Engine, threadIds: string[]) => {
    for (const threadId of threadIds) {
      expect(must(await engine.verify(threadId, { strict: true })).ok).toBe(true);
    }
    const oracle = await Promise.all(
      threadIds.map(async (id) => expectedReadModels(id, must(await engine.getState(id)))),
    );
    const merged = Object.fromEntries(
      Object.keys(oracle[0]!).map((table) => [
        table,
        oracle.flatMap((d) => d[table as keyof typeof d]),
      ]),
    ) as ReturnType<typeof expectedReadModels>;
    expect(comparable(await engine.store.dumpReadModels(threadIds))).toEqual(
      sortedLikeDump(merged),
    );
    const target = openThreadStore(await backend.freshUrl());
    closing.push(target);
    await rebuildInto(engine.store, target, threadIds);
    expect(await target.dumpReadModels()).toEqual(await engine.store.dumpReadModels(threadIds));
  };

  it('64 concurrent appends across threads all land, in far fewer than 64 transactions', async () => {
    const { store, engine } = await open();
    const threads = await createThreads(engine, 64);
    const before = store.writerStats();
    expect(before.groupCommit).toBe(true);
    const results = await Promise.all(
      threads.map((threadId, i) =>
        engine.appendNodes({
          threadId,
          expectedIndex: 1,
          nodes: [
            { kind: 'inference', payload: { i } },
            { kind: 'answer', payload: { i, done: true } },
          ],
        }),
      ),
    );
    results.forEach((result, i) => {
      const value = must(result);
      expect(value).toMatchObject({ threadId: threads[i], logIndex: 1, logLength: 2 });
      expect(value.nodes.map((n) => n.payload)).toEqual([{ i }, { i, done: true }]);
    });
    const after = store.writerStats();
    const transactions = after.transactions - before.transactions;
    expect(after.items - before.items).toBe(64);
    expect(transactions).toBeGreaterThanOrEqual(1);
    expect(transactions).toBeLessThanOrEqual(8);
    expect(after.largestBatch).toBeGreaterThan(1);
    expect(after.merged).toBeGreaterThan(before.merged);
    for (const [i, threadId] of threads.entries()) {
      const entries = await store.readEntries(threadId);
      expect(entries.map((e) => e.index)).toEqual([0, 1]);
      const recorded = entries[1]!.event as unknown as { nodes: Array<{ id: string }> };
      expect(must(results[i]!).nodes[0]?.id).toBe(recorded.nodes[0]?.id);
    }
    await expectConsistent(engine, threads);
  });

  it('a failing commit in a group fails alone; the others land', async () => {
    // One transaction handed to the writer at a time: everything below forms one group.
    const { store, engine } = await open({ inFlight: 1 });
    const threads = await createThreads(engine, 8);
    const [stale, taken] = threads as [string, string];
    // A second engine on the same store whose cache of `stale` falls behind.
    const other = engineOn(store, 'other');
    must(await other.getState(stale));
    must(await engine.appendNodes({ threadId: stale, nodes: [{ kind: 'system', payload: 'a' }] }));
    // A commit that breaks a foreign key (its thread does not exist): an error, not a conflict.
    const ghost = must(projectLog('ghost', await store.readEntries(stale))).changes!;
    const orphan = { ...ghost, created: false, entries: ghost.entries.slice(1) };
    // A new thread under a key that exists, as a creation racing another would be (the engine
    // looks a taken id up before it commits, so a race is the only way one reaches the writer).
    const duplicate = must(projectLog(taken, await store.readEntries(taken))).changes!;

    const before = store.writerStats();
    // Every command below reaches the writer in this turn of the event loop (no reads first).
    const [good, conflicted, existing, broken] = await Promise.all([
      Promise.all(
        threads
          .slice(2)
          .map((threadId, i) =>
            engine.appendNodes({ threadId, nodes: [{ kind: 'tool_call', payload: { i } }] }),
          ),
      ),
      // Planned on the stale cached state: passes the engine's check, loses at the unique key.
      other.appendNodes({
        threadId: stale,
        expectedIndex: 1,
        nodes: [{ kind: 'system', payload: 'b' }],
      }),
      store.commit(duplicate),
      store.commit(orphan).then(
        () => 'committed',
        () => 'rejected',
      ),
    ]);
    const after = store.writerStats();
    // Everything above reached the writer together, as one group: the fast path's transaction
    // (one statement per table for all) failed and rolled back whole, then a second one ran one
    // SAVEPOINT per commit.
    expect(after.transactions - before.transactions).toBe(2);
    expect(after.merged).toBe(before.merged);
    expect(after.largestBatch).toBeGreaterThanOrEqual(9);

    for (const result of good) expect(must(result).logIndex).toBe(1);
    expect(failure(conflicted)).toMatchObject({
      code: 'CONFLICT',
      expectedIndex: 1,
      actualIndex: 2,
    });
    expect(failure(existing).code).toBe('CONFLICT');
    expect(broken).toBe('rejected');

    expect((await store.readEntries(stale)).map((e) => e.event.type)).toEqual([
      'thread_created',
      'nodes_appended',
    ]);
    expect(await store.getLogLength('ghost')).toBeUndefined();
    expect(await store.readEntries('ghost')).toEqual([]);
    await expectConsistent(engine, threads);
  });

  it('concurrent first uses of one idempotency key: one lands, the other is told apart', async () => {
    const { engine } = await open();
    const threads = await createThreads(engine, 4);
    const [first, second, ...appended] = await Promise.all([
      engine.createThread({ idempotencyKey: 'k', metadata: { n: 1 } }),
      engine.createThread({ idempotencyKey: 'k', metadata: { n: 2 } }),
      ...threads.map((threadId) =>
        engine.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: threadId }] }),
      ),
    ]);
    // Either may win the race for the record's key (on Postgres the two commit concurrently).
    const [won, lost] = first!.ok ? [first!, second!] : [second!, first!];
    expect(must(won).logIndex).toBe(0);
    expect(failure(lost).code).toBe('IDEMPOTENCY_KEY_REUSED');
    for (const result of appended) expect(must(result).logIndex).toBe(1);
    const created = must(won).threadId;
    expect(await engine.store.dumpReadModels()).toMatchObject({
      thread: expect.arrayContaining([expect.objectContaining({ id: created })]),
    });
    expect((await engine.store.dumpReadModels()).thread).toHaveLength(5);
    await expectConsistent(engine, [...threads, created]);
  });

  it('many commands on many threads from concurrent callers keep every log gap-free', async () => {
    const { store, engine } = await open();
    const threads = await createThreads(engine, 16);
    const perThread = 6;
    const results = await Promise.all(
      threads.flatMap((threadId, t) =>
        Array.from({ length: perThread }, (_, k) =>
          engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { t, k } }] }),
        ),
      ),
    );
    for (const result of results) must(result);
    for (const threadId of threads) {
      const entries = await store.readEntries(threadId);
      expect(entries.map((e) => e.index)).toEqual(
        Array.from({ length: perThread + 1 }, (_, i) => i),
      );
    }
    expect(store.writerStats().transactions).toBeLessThan(16 + 16 * perThread);
    await expectConsistent(engine, threads);
  });

  it('grouped runs, usage, memory and resource heads keep the read models equal to replay', async () => {
    const { store, engine } = await open();
    const threads = await createThreads(engine, 12);
    const before = store.writerStats();
    const started = await Promise.all(
      threads.map((threadId, i) =>
        i % 2 === 0
          ? engine.startRun({ threadId, goal: `goal ${i}`, budgetUsd: 1 })
          : engine.remember({ threadId, type: 'preference', key: `k${i % 3}`, content: { i } }),
      ),
    );
    for (const result of started) expect(result.ok).toBe(true);
    expect(store.writerStats().merged).toBeGreaterThan(before.merged);
    const runs = started.flatMap((r) => (r.ok && 'runId' in r.value ? [r.value.runId] : []));
    const more = await Promise.all([
      ...runs.map((runId) =>
        engine.recordUsage({ runId, model: 'm', inputTokens: 10, outputTokens: 5, costUsd: 0.1 }),
      ),
      ...threads.map((threadId, i) =>
        engine.appendNodes({
          threadId,
          nodes: [{ kind: 'tool_call', payload: { i }, resourceKey: `resource:file:f${i % 2}` }],
        }),
      ),
    ]);
    for (const result of more) expect(result.ok).toBe(true);
    await expectConsistent(engine, threads);
  });

  it('without group commit every commit is its own transaction', async () => {
    const { store, engine } = await open(false);
    const threads = await createThreads(engine, 8);
    const before = store.writerStats();
    expect(before.groupCommit).toBe(false);
    const results = await Promise.all(
      threads.map((threadId) =>
        engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: threadId }] }),
      ),
    );
    for (const result of results) expect(must(result).logIndex).toBe(1);
    const after = store.writerStats();
    expect(after.transactions - before.transactions).toBe(8);
    expect(after.largestBatch).toBe(1);
    await expectConsistent(engine, threads);
  });
}

describe('group commit [sqlite]', () => {
  const backend = useBackend(sqliteBackend());
  suite(backend);

  it('the writer thread gets two transactions at once: the first commit goes ahead alone', async () => {
    const store = openThreadStore(await backend.freshUrl());
    const engine = engineOnStore(store, 'w');
    try {
      const threads: string[] = [];
      for (let i = 0; i < 32; i++) threads.push(must(await engine.createThread({})).threadId);
      const before = store.writerStats();
      // The appends reach the writer without reading the database (the engine knows each new
      // thread): the first finds the writer idle and goes at once, the others queue behind it
      // and are written together. How many reach the queue before it drains depends on the
      // machine's timing, so what is checked is that they were grouped, not into how many.
      const results = await Promise.all(
        threads.map((threadId) =>
          engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: threadId }] }),
        ),
      );
      for (const result of results) expect(must(result).logIndex).toBe(1);
      const after = store.writerStats();
      const transactions = after.transactions - before.transactions;
      expect(transactions).toBeGreaterThanOrEqual(2);
      expect(transactions).toBeLessThan(threads.length / 2);
      expect(after.merged - before.merged).toBeGreaterThanOrEqual(1);
      expect(after.largestBatch).toBeGreaterThan(1);
      for (const threadId of threads) {
        expect((await store.readEntries(threadId)).map((e) => e.index)).toEqual([0, 1]);
      }
    } finally {
      await engine.close();
    }
  });

  it('stores opened on one SQLite file have a writer each, and the file serialises them', async () => {
    const url = await backend.freshUrl();
    const a = openThreadStore(url);
    const b = openThreadStore(url);
    const engines = [engineOnStore(a, 'a'), engineOnStore(b, 'b')];
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => engines[i % 2]!.createThread({})),
      );
      for (const result of results) must(result);
      // No process-wide state: each store writes its own commits, and all of them land.
      expect(a.writerStats().items).toBe(10);
      expect(b.writerStats().items).toBe(10);
      const dump = await a.dumpReadModels();
      expect(dump.thread).toHaveLength(20);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describeWithPostgres('group commit', () => {
  suite(useBackend(postgresBackend()));
});

function engineOnStore(store: ThreadStore, prefix: string) {
  return createEngine({
    store,
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds(prefix),
  });
}
