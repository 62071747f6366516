import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { type CommittedEvent, createEngine, type Engine } from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type Backend,
  failure,
  must,
  openEngine,
  postgresBackend,
  sqliteBackend,
  type TestEngine,
  useBackend,
} from './support.js';

function suite(backend: Backend) {
  const opened: Engine[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((e) => e.close()));
  });
  const open = async (options: Parameters<typeof openEngine>[1] = {}) => {
    const engine = await openEngine(backend, options);
    opened.push(engine);
    return engine;
  };
  /**
   * A second engine on the same database, with its own cache: another process, as far as
   * caching goes. On Postgres it has its own connection pool too. On SQLite it shares the
   * first engine's connection: better-sqlite3 is synchronous, so a second connection in the same
   * process would block the event loop in its busy wait while the first holds the write lock
   * (separate processes are the job of the crash and multi-process tests).
   */
  const second = (engine: TestEngine, prefix: string) => {
    const store = backend.name === 'sqlite' ? engine.store : openThreadStore(engine.url);
    const other = createEngine({
      store,
      clock: createSimulatedClock('2026-03-01T01:00:00.000Z', 1000),
      ids: createSequentialIds(prefix),
    });
    if (store !== engine.store) opened.push(other);
    return other;
  };
  const logLength = async (engine: Engine, threadId: string) =>
    (await engine.store.readEntries(threadId)).length;

  describe('idempotency', () => {
    it('a retry with the same key returns the first result and writes nothing', async () => {
      const engine = await open();
      const created = must(await engine.createThread({ idempotencyKey: 'c1', metadata: 1 }));
      expect(must(await engine.createThread({ idempotencyKey: 'c1', metadata: 1 }))).toEqual(
        created,
      );
      expect((await engine.store.dumpReadModels()).thread).toHaveLength(1);
      const { threadId } = created;

      const append = {
        threadId,
        idempotencyKey: 'a1',
        nodes: [{ kind: 'inference' as const, payload: { n: 1 } }],
      };
      const appended = must(await engine.appendNodes(append));
      expect(must(await engine.appendNodes(append))).toEqual(appended);
      expect(await logLength(engine, threadId)).toBe(2);

      const started = must(await engine.startRun({ threadId, goal: 'g', idempotencyKey: 's1' }));
      expect(must(await engine.startRun({ threadId, goal: 'g', idempotencyKey: 's1' }))).toEqual(
        started,
      );
      const dispatch = {
        runId: started.runId,
        idempotencyKey: 'd1',
        action: { type: 'update_memory', payload: { updates: { a: 1 } } },
      };
      const dispatched = must(await engine.dispatch(dispatch));
      expect(must(await engine.dispatch(dispatch))).toEqual(dispatched);
      // The run was started once and the action dispatched once.
      expect(await logLength(engine, threadId)).toBe(4);
      expect((await engine.store.dumpReadModels()).run).toHaveLength(1);
    });

    it('the same key with a different request is IDEMPOTENCY_KEY_REUSED', async () => {
      const engine = await open();
      const { threadId } = must(await engine.createThread({ idempotencyKey: 'k' }));
      expect(
        failure(await engine.createThread({ idempotencyKey: 'k', metadata: 2 })),
      ).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', key: 'k' });
      must(
        await engine.appendNodes({
          threadId,
          idempotencyKey: 'k',
          nodes: [{ kind: 'answer', payload: 1 }],
        }),
      ); // another scope: another command
      expect(
        failure(
          await engine.appendNodes({
            threadId,
            idempotencyKey: 'k',
            nodes: [{ kind: 'answer', payload: 2 }],
          }),
        ),
      ).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
      expect(await logLength(engine, threadId)).toBe(2);
    });

    it('a failed command records nothing, so its retry runs again', async () => {
      const engine = await open();
      const { threadId } = must(await engine.createThread({}));
      const input = {
        threadId,
        expectedIndex: 5,
        idempotencyKey: 'x',
        nodes: [{ kind: 'answer' as const, payload: 1 }],
      };
      expect(failure(await engine.appendNodes(input))).toMatchObject({ code: 'CONFLICT' });
      expect(must(await engine.appendNodes({ ...input, expectedIndex: 1 })).logIndex).toBe(1);
    });

    it('concurrent first uses of one key write once and answer alike', async () => {
      const engine = await open();
      const other = second(engine, 'b');
      const { threadId } = must(await engine.createThread({}));
      const input = {
        threadId,
        idempotencyKey: 'race',
        nodes: [{ kind: 'answer' as const, payload: 'once' }],
      };
      const [a, b] = await Promise.all([engine.appendNodes(input), other.appendNodes(input)]);
      expect(must(a)).toEqual(must(b));
      expect(await logLength(engine, threadId)).toBe(2);
    });
  });

  describe('concurrency', () => {
    it('without expectedIndex a stale engine catches up and retries', async () => {
      const a = await open();
      const { threadId } = must(await a.createThread({}));
      const b = second(a, 'b');
      must(await b.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: 'b1' }] }));
      must(await a.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: 'a1' }] }));
      // b's cached state is one entry behind now; its commit loses, reloads and lands.
      const landed = must(
        await b.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: 'b2' }] }),
      );
      expect(landed.logIndex).toBe(3);
      expect(must(await a.verify(threadId)).ok).toBe(true);
    });

    it('with a stale expectedIndex the loser gets CONFLICT with the actual index', async () => {
      const a = await open();
      const { threadId } = must(await a.createThread({}));
      const b = second(a, 'b');
      const results = await Promise.all(
        [a, b, a, b].map((engine, i) =>
          engine.appendNodes({
            threadId,
            expectedIndex: 1,
            nodes: [{ kind: 'answer', payload: { i } }],
          }),
        ),
      );
      const winners = results.filter((r) => r.ok);
      expect(winners).toHaveLength(1);
      for (const loser of results.filter((r) => !r.ok)) {
        expect(failure(loser)).toMatchObject({
          code: 'CONFLICT',
          threadId,
          expectedIndex: 1,
          actualIndex: 2,
        });
      }
    });

    it('many writers on two engines lose no entry and leave no gap', async () => {
      const a = await open();
      const { threadId } = must(await a.createThread({}));
      const b = second(a, 'b');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 === 0 ? a : b).appendNodes({
            threadId,
            nodes: [{ kind: 'inference', payload: { i } }],
          }),
        ),
      );
      const indices = results.map((r) => must(r).logIndex).sort((x, y) => x - y);
      expect(indices).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const entries = await a.store.readEntries(threadId);
      expect(entries.map((e) => e.index)).toEqual(Array.from({ length: 13 }, (_, i) => i));
      expect(must(await a.verify(threadId)).ok).toBe(true);
    });
  });

  describe('publisher', () => {
    it('publishes after commit, in order; a failing publisher fails no command', async () => {
      const events: CommittedEvent[] = [];
      const errors: unknown[] = [];
      const engine = await open({
        publisher: {
          publish(event) {
            events.push(event);
            if (event.logLength === 2) throw new Error('broker down');
          },
        },
        onPublishError: (error) => errors.push(error),
      });
      const { threadId } = must(await engine.createThread({}));
      must(await engine.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: 1 }] }));
      must(await engine.startRun({ threadId, goal: 'g' }));
      expect(failure(await engine.appendNodes({ threadId, nodes: [] })).code).toBe(
        'VALIDATION_FAILED',
      );
      expect(events.map((e) => [e.logLength, e.entries.map((x) => x.event.type)])).toEqual([
        [1, ['thread_created']],
        [2, ['nodes_appended']],
        [3, ['run_started']],
      ]);
      expect(events[1]!.effects).toEqual([expect.objectContaining({ type: 'node_appended' })]);
      expect(errors).toHaveLength(1);
    });
  });
}

describe('idempotency and concurrency [sqlite]', () => {
  suite(useBackend(sqliteBackend()));
});

describeWithPostgres('idempotency and concurrency', () => {
  suite(useBackend(postgresBackend()));
});
