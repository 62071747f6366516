/**
 * Deadlines: `engine.fireDueDeadlines` times runs out once their approval or
 * execution deadline has passed by the engine clock — once, also when several engines sweep one
 * database — and `startDeadlineScheduler` runs sweeps without overlapping them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { LogEntry } from '../../src/core/log/index.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import {
  type CommittedEvent,
  createEngine,
  type DeadlineSweep,
  type Engine,
  type EngineOptions,
  startDeadlineScheduler,
} from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import {
  type DueRun,
  openDueRunSource,
  openThreadStore,
  type ThreadStore,
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

const START = '2026-03-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString();
const HOUR = 3_600_000;

/** A clock the test moves: 1 ms per reading, so entries keep distinct times. */
const testClock = () => createSimulatedClock(START, 1);

/** The read models of a thread equal what its state says they must be, and it verifies. */
async function expectConsistent(engine: Engine, threadId: string) {
  const state = must(await engine.getState(threadId));
  expect(comparable(await engine.store.dumpReadModels([threadId]))).toEqual(
    sortedLikeDump(expectedReadModels(threadId, state)),
  );
  expect(must(await engine.verify(threadId, { strict: true }))).toEqual({
    ok: true,
    checkedEntries: state.length,
  });
}

const deadlineEntries = (entries: LogEntry[], runId?: string) =>
  entries.filter(
    (e) => e.event.type === 'deadline_fired' && (runId === undefined || e.event.runId === runId),
  );

const runRow = async (engine: Engine, threadId: string, runId: string) =>
  (await engine.store.dumpReadModels([threadId])).run.find((r) => r.id === runId)!;

function deadlineSuite(backend: Backend) {
  const engines: Engine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });

  const open = (url: string, options: Partial<EngineOptions> = {}) => {
    const engine = createEngine({
      databaseUrl: url,
      clock: testClock(),
      ids: createSequentialIds(`e${engines.length}`),
      ...options,
    });
    engines.push(engine);
    return engine;
  };

  const waitingRun = async (
    engine: Engine,
    threadId: string,
    timeoutMs?: number,
    start: { maxExecutionTimeMs?: number } = {},
  ) => {
    const { runId } = must(await engine.startRun({ threadId, goal: 'ask first', ...start }));
    const payload = {
      pending_approval: { question: 'ship it?' },
      ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }),
    };
    const waiting = must(
      await engine.dispatch({ runId, action: { type: 'request_human_input', payload } }),
    );
    expect(waiting.status).toBe('waiting');
    return runId;
  };

  it('fires an approval timeout once, exactly when it is due, after commit', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const published: CommittedEvent[] = [];
    const engine = open(url, { clock, publisher: { publish: (e) => void published.push(e) } });
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const runId = await waitingRun(engine, threadId, 60_000);
    const dueAt = (await runRow(engine, threadId, runId)).waitingTimeoutAt as string;

    // One millisecond early: nothing is due.
    clock.set(new Date(Date.parse(dueAt) - 1).toISOString());
    const early = must(await engine.fireDueDeadlines());
    expect(early).toMatchObject({ found: 0, fired: [], skipped: [], failed: [] });

    // At the deadline itself: it fires (deadlines at or before now are due).
    clock.set(dueAt);
    const sweep = must(await engine.fireDueDeadlines());
    expect(sweep.now).toBe(dueAt);
    expect(sweep.fired).toEqual([
      {
        threadId,
        runId,
        deadline: 'approval',
        dueAt,
        status: 'timeout',
        logIndex: 3,
        logLength: 4,
      },
    ]);
    expect(sweep).toMatchObject({ found: 1, skipped: [], failed: [] });

    const entries = await engine.store.readEntries(threadId);
    expect(deadlineEntries(entries)).toHaveLength(1);
    expect(entries[3]!.event).toEqual({
      type: 'deadline_fired',
      runId,
      deadline: 'approval',
      dueAt,
    });
    // Recorded at the engine clock's next reading: the sweep's time or just after.
    expect(Date.parse(entries[3]!.recordedAt)).toBeGreaterThanOrEqual(Date.parse(dueAt));
    const run = await runRow(engine, threadId, runId);
    expect(run).toMatchObject({ status: 'timeout', waitingTimeoutAt: null, logIndex: 3 });
    expect(JSON.parse(run.state as string)).toMatchObject({
      status: 'timeout',
      last_error: `approval deadline ${dueAt} passed`,
    });
    expect(published.at(-1)).toMatchObject({ threadId, logLength: 4 });
    expect(published.at(-1)!.entries.map((e) => e.event.type)).toEqual(['deadline_fired']);

    // Later sweeps find nothing: the run is terminal, its execution deadline no longer applies.
    clock.advance(2 * HOUR);
    expect(must(await engine.fireDueDeadlines())).toMatchObject({ found: 0, fired: [] });
    expect(await engine.store.getLogLength(threadId)).toBe(4);
    await expectConsistent(engine, threadId);
  });

  it('fires an execution deadline once (maxExecutionTimeMs after the run started)', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const engine = open(url, { clock });
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const { runId } = must(
      await engine.startRun({ threadId, goal: 'be quick', maxExecutionTimeMs: 5000 }),
    );
    // The default execution deadline (1 h) of a second run is not due yet.
    const { runId: slow } = must(await engine.startRun({ threadId, goal: 'take your time' }));
    const started = JSON.parse((await runRow(engine, threadId, runId)).state as string)
      .started_at as string;
    const dueAt = new Date(Date.parse(started) + 5000).toISOString();
    expect((await runRow(engine, threadId, runId)).executionDeadlineAt).toBe(dueAt);

    clock.set(at(10_000));
    const sweep = must(await engine.fireDueDeadlines());
    expect(sweep.fired).toEqual([
      expect.objectContaining({ runId, deadline: 'execution', dueAt, status: 'timeout' }),
    ]);
    expect(must(await engine.fireDueDeadlines()).fired).toEqual([]);
    expect((await runRow(engine, threadId, slow)).status).toBe('running');
    expect(deadlineEntries(await engine.store.readEntries(threadId))).toHaveLength(1);

    clock.set(at(HOUR + 10_000));
    const later = must(await engine.fireDueDeadlines());
    expect(later.fired.map((f) => [f.runId, f.deadline])).toEqual([[slow, 'execution']]);
    const entries = await engine.store.readEntries(threadId);
    expect(deadlineEntries(entries, runId)).toHaveLength(1);
    expect(deadlineEntries(entries, slow)).toHaveLength(1);
    await expectConsistent(engine, threadId);
  });

  it('leaves a run resolved before its approval deadline alone (its execution deadline stays)', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const engine = open(url, { clock });
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const runId = await waitingRun(engine, threadId, 60_000, { maxExecutionTimeMs: 2 * HOUR });
    must(await engine.resolveApproval({ runId, decision: 'approve' }));
    const length = await engine.store.getLogLength(threadId);

    clock.set(at(HOUR));
    expect(must(await engine.fireDueDeadlines())).toMatchObject({ found: 0, fired: [] });
    expect(await engine.store.getLogLength(threadId)).toBe(length);
    expect((await runRow(engine, threadId, runId)).status).toBe('running');

    clock.set(at(3 * HOUR));
    const sweep = must(await engine.fireDueDeadlines());
    expect(sweep.fired.map((f) => f.deadline)).toEqual(['execution']);
    await expectConsistent(engine, threadId);
  });

  it('never touches terminal runs', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const engine = open(url, { clock });
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const { runId: done } = must(
      await engine.startRun({ threadId, goal: 'done', maxExecutionTimeMs: 1000 }),
    );
    must(
      await engine.dispatch({
        runId: done,
        action: { type: 'set_status', payload: { status: 'completed' } },
      }),
    );
    const waiting = await waitingRun(engine, threadId, 1000, { maxExecutionTimeMs: 1000 });
    must(await engine.cancelRun({ runId: waiting, reason: 'user' }));
    const before = await engine.store.dumpReadModels([threadId]);
    const length = await engine.store.getLogLength(threadId);

    clock.set(at(48 * HOUR));
    expect(must(await engine.fireDueDeadlines())).toMatchObject({
      found: 0,
      fired: [],
      skipped: [],
      failed: [],
    });
    expect(await engine.store.getLogLength(threadId)).toBe(length);
    expect(await engine.store.dumpReadModels([threadId])).toEqual(before);
  });

  it('pages through due runs with limit and the next cursor', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const engine = open(url, { clock });
    const runs: string[] = [];
    for (const threadId of ['a', 'b', 'c']) {
      must(await engine.createThread({ threadId }));
      for (let i = 0; i < 2; i++) {
        const { runId } = must(
          await engine.startRun({ threadId, goal: `g${i}`, maxExecutionTimeMs: 1000 }),
        );
        runs.push(`${threadId}/${runId}`);
      }
    }
    clock.set(at(HOUR));
    const pages: DeadlineSweep[] = [];
    let after: DeadlineSweep['next'];
    do {
      const page = must(await engine.fireDueDeadlines({ limit: 4, after }));
      pages.push(page);
      after = page.next;
    } while (after !== undefined);
    expect(pages.map((p) => p.fired.length)).toEqual([4, 2]);
    expect(pages[0]!.next).toEqual({ threadId: 'b', runId: expect.any(String) });
    const fired = pages.flatMap((p) => p.fired.map((f) => `${f.threadId}/${f.runId}`));
    expect(fired.sort()).toEqual(runs.sort());
    for (const threadId of ['a', 'b', 'c']) await expectConsistent(engine, threadId);
  });

  it('refuses a bad limit or cursor with VALIDATION_FAILED, writing nothing', async () => {
    const engine = open(await backend.freshUrl());
    for (const input of [
      { limit: 0 },
      { limit: 1.5 },
      { limit: 10_001 },
      { limit: '5' },
      { after: { threadId: '', runId: 'r' } },
      { after: { threadId: 't' } },
      { after: 'cursor' },
    ]) {
      const error = failure(await engine.fireDueDeadlines(input as never));
      expect(error.code, JSON.stringify(input)).toBe('VALIDATION_FAILED');
    }
  });

  it('times out a run whose wait another engine wrote after this one cached the thread', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const sweeper = open(url, { clock });
    const writer = open(url, { clock });
    const { threadId } = must(await writer.createThread({ threadId: 't' }));
    const { runId } = must(await writer.startRun({ threadId, goal: 'g' }));
    // The sweeper caches the thread with the run still running …
    expect(must(await sweeper.getState(threadId)).runs.get(runId)?.status).toBe('running');
    // … then the other engine makes it wait, with a short approval timeout.
    must(
      await writer.dispatch({
        runId,
        action: { type: 'request_human_input', payload: { pending_approval: {}, timeout_ms: 10 } },
      }),
    );
    clock.advance(1000);
    const sweep = must(await sweeper.fireDueDeadlines());
    expect(sweep.fired.map((f) => [f.runId, f.deadline])).toEqual([[runId, 'approval']]);
    await expectConsistent(writer, threadId);
  });

  it('writes one entry when another engine fires the same deadline between plan and commit', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const other = open(url, { clock });
    const { threadId } = must(await other.createThread({ threadId: 't' }));
    const runId = await waitingRun(other, threadId, 1000);
    clock.advance(5000);
    // The loser's store injects the race: its first commit waits until the other engine has
    // fired the deadline, so the loser's entry meets a taken (thread, index).
    const real = openThreadStore(url);
    let commits = 0;
    let otherSweep: DeadlineSweep | undefined;
    const racing: ThreadStore = {
      ...real,
      async commit(changes, options) {
        if (++commits === 1) otherSweep = must(await other.fireDueDeadlines());
        return real.commit(changes, options);
      },
    };
    const loser = open(url, { clock, store: racing });
    const sweep = must(await loser.fireDueDeadlines());
    expect(otherSweep?.fired.map((f) => f.runId)).toEqual([runId]);
    // The loser committed once (a conflict), re-planned on the caught-up state and wrote nothing.
    expect(commits).toBe(1);
    expect(sweep).toMatchObject({ found: 1, fired: [], skipped: [{ threadId, runId }] });
    expect(sweep.failed).toEqual([]);
    const entries = await other.store.readEntries(threadId);
    expect(deadlineEntries(entries)).toHaveLength(1);
    await expectConsistent(other, threadId);
  });

  it('reads due runs from a store that answers the query itself', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const source = openDueRunSource(url);
    const queried: DueRun[][] = [];
    const store = openThreadStore(url);
    const engine = open(url, {
      clock,
      store: Object.assign(store, {
        findDueRuns: async (query: Parameters<typeof source.findDueRuns>[0]) => {
          const due = await source.findDueRuns(query);
          queried.push(due);
          return due;
        },
      }),
    });
    try {
      const { threadId } = must(await engine.createThread({ threadId: 't' }));
      const { runId } = must(
        await engine.startRun({ threadId, goal: 'g', maxExecutionTimeMs: 1000 }),
      );
      clock.advance(2000);
      expect(must(await engine.fireDueDeadlines()).fired.map((f) => f.runId)).toEqual([runId]);
      expect(queried[0]?.map((d) => [d.runId, d.deadline])).toEqual([[runId, 'execution']]);
    } finally {
      await source.close();
    }
  });

  it('two engines with their schedulers time out N runs with exactly one entry each', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const setup = open(url, { clock });
    const threads = ['p', 'q', 'r', 's'];
    const runs = new Map<string, string>();
    for (const threadId of threads) {
      must(await setup.createThread({ threadId }));
      for (let i = 0; i < 5; i++) {
        const runId =
          i % 2 === 0
            ? await waitingRun(setup, threadId, 60_000)
            : must(await setup.startRun({ threadId, goal: `g${i}`, maxExecutionTimeMs: 60_000 }))
                .runId;
        runs.set(runId, threadId);
      }
    }
    clock.set(at(2 * HOUR));
    const a = open(url, { clock });
    const b = open(url, { clock });
    const fired: string[] = [];
    const errors: unknown[] = [];
    let allFired!: () => void;
    const allDone = new Promise<void>((resolve) => {
      allFired = resolve;
    });
    const options = {
      intervalMs: 5,
      pageSize: 3,
      onSweep: (sweep: DeadlineSweep) => {
        fired.push(...sweep.fired.map((f) => f.runId));
        if (fired.length >= runs.size) allFired();
      },
      onError: (e: unknown) => errors.push(e),
    };
    const schedulers = [startDeadlineScheduler(a, options), startDeadlineScheduler(b, options)];
    await allDone;
    await Promise.all(schedulers.map((s) => s.stop()));

    expect(errors).toEqual([]);
    expect(fired.sort()).toEqual([...runs.keys()].sort());
    for (const threadId of threads) {
      const entries = await setup.store.readEntries(threadId);
      for (const [runId, home] of runs) {
        if (home === threadId) expect(deadlineEntries(entries, runId), runId).toHaveLength(1);
      }
      await expectConsistent(a, threadId);
    }
    // The read models equal a rebuild from the log.
    const rebuilt = openThreadStore(await backend.freshUrl());
    try {
      await rebuildInto(setup.store, rebuilt, threads);
      expect(await rebuilt.dumpReadModels()).toEqual(await setup.store.dumpReadModels(threads));
    } finally {
      await rebuilt.close();
    }
  });

  it('reports a thread that fails to load as failed, writes nothing there, and fires the others', async () => {
    const url = await backend.freshUrl();
    const clock = testClock();
    const setup = open(url, { clock });
    const runs: Record<string, string> = {};
    for (const threadId of ['bad', 'good']) {
      must(await setup.createThread({ threadId }));
      runs[threadId] = must(
        await setup.startRun({ threadId, goal: 'g', maxExecutionTimeMs: 1000 }),
      ).runId;
    }
    // Corrupt the state hash recorded in the last entry of thread "bad".
    const weft = createPrisma(url);
    const db = weft.prisma as unknown as {
      $queryRawUnsafe<T>(q: string, ...v: unknown[]): Promise<T>;
      $executeRawUnsafe(q: string, ...v: unknown[]): Promise<number>;
      $disconnect(): Promise<void>;
    };
    const p = (n: number) => (weft.provider === 'postgres' ? `$${n}` : '?');
    try {
      const [row] = await db.$queryRawUnsafe<Array<{ entry: string }>>(
        `SELECT "entry" FROM "log_entry" WHERE "thread_id" = ${p(1)} AND "log_index" = 1`,
        'bad',
      );
      const entry = JSON.parse(row!.entry) as LogEntry;
      entry.verification = { ...entry.verification, stateHash: '0'.repeat(64) };
      await db.$executeRawUnsafe(
        `UPDATE "log_entry" SET "entry" = ${p(1)} WHERE "thread_id" = ${p(2)} AND "log_index" = 1`,
        canonicalJson(entry),
        'bad',
      );
    } finally {
      await db.$disconnect();
    }

    clock.advance(5000);
    const sweeper = open(url, { clock });
    const sweep = must(await sweeper.fireDueDeadlines());
    expect(sweep.fired.map((f) => f.threadId)).toEqual(['good']);
    expect(sweep.failed).toEqual([
      {
        threadId: 'bad',
        runId: runs.bad,
        error: expect.objectContaining({ code: 'VERIFICATION_FAILED', index: 1 }),
      },
    ]);
    expect(await sweeper.store.getLogLength('bad')).toBe(2);
  });

  it('sweeps through the store of an engine opened on a store alone', async () => {
    const url = await backend.freshUrl();
    const engine = createEngine({ store: openThreadStore(url) });
    engines.push(engine);
    const sweep = await engine.fireDueDeadlines();
    expect(sweep.ok && sweep.value.found).toBe(0);
  });
}

describe('deadlines [sqlite]', () => {
  deadlineSuite(useBackend(sqliteBackend()));
});

describeWithPostgres('deadlines', () => {
  deadlineSuite(useBackend(postgresBackend()));
});

/** A stand-in engine whose sweeps the test releases one at a time (the scheduler's logic only). */
function manualEngine() {
  const calls: Array<{ release: (sweep?: Partial<DeadlineSweep>) => void }> = [];
  let running = 0;
  let maxRunning = 0;
  let waiter: (() => void) | undefined;
  const engine: Pick<Engine, 'fireDueDeadlines'> = {
    fireDueDeadlines: () =>
      new Promise((resolve) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        calls.push({
          release: (sweep = {}) => {
            running--;
            resolve({
              ok: true,
              value: {
                now: START,
                found: 0,
                fired: [],
                skipped: [],
                failed: [],
                ...sweep,
              },
            });
          },
        });
        waiter?.();
      }),
  };
  /** Resolves when the scheduler has made `n` calls in all. */
  const called = async (n: number) => {
    while (calls.length < n) await new Promise<void>((r) => (waiter = r));
  };
  return { engine, calls, called, maxRunning: () => maxRunning };
}

describe('startDeadlineScheduler', () => {
  it('sweeps at once, never overlaps sweeps, wakes early and stops after the sweep in progress', async () => {
    const m = manualEngine();
    const sweeps: DeadlineSweep[] = [];
    // An interval far beyond the test: every sweep after the first comes from wake().
    const scheduler = startDeadlineScheduler(m.engine, {
      intervalMs: 3_600_000,
      onSweep: (s) => sweeps.push(s),
    });
    await m.called(1);
    scheduler.wake();
    scheduler.wake();
    expect(m.calls).toHaveLength(1);
    m.calls[0]!.release();
    // Woken during the sweep: the next one starts right after it, not an hour later.
    await m.called(2);
    expect(m.maxRunning()).toBe(1);
    const stopped = scheduler.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    m.calls[1]!.release();
    await stopped;
    expect(sweeps).toHaveLength(2);
    scheduler.wake();
    await new Promise((r) => setImmediate(r));
    expect(m.calls).toHaveLength(2);
  });

  it('follows the next cursor within one sweep', async () => {
    const m = manualEngine();
    const inputs: unknown[] = [];
    const original = m.engine.fireDueDeadlines;
    m.engine.fireDueDeadlines = (input) => {
      inputs.push(input);
      return original(input);
    };
    const scheduler = startDeadlineScheduler(m.engine, { intervalMs: 3_600_000, pageSize: 2 });
    await m.called(1);
    m.calls[0]!.release({ next: { threadId: 't', runId: 'r2' } });
    await m.called(2);
    m.calls[1]!.release();
    const stopped = scheduler.stop();
    await stopped;
    expect(inputs).toEqual([
      { limit: 2, after: undefined },
      { limit: 2, after: { threadId: 't', runId: 'r2' } },
    ]);
  });

  it('reports thrown sweeps and failed deadlines (not lost races) to onError and keeps going', async () => {
    const m = manualEngine();
    const errors: unknown[] = [];
    let throws = true;
    const original = m.engine.fireDueDeadlines;
    m.engine.fireDueDeadlines = (input) => {
      if (throws) {
        throws = false;
        return Promise.reject(new Error('database unreachable'));
      }
      return original(input);
    };
    const scheduler = startDeadlineScheduler(m.engine, {
      intervalMs: 0,
      onError: (e) => {
        errors.push(e);
        throw new Error('a failing handler does not stop the scheduler');
      },
    });
    await m.called(1);
    const broken = { code: 'VERIFICATION_FAILED' as const, message: 'bad', index: 3, entryId: 'x' };
    const lost = {
      code: 'CONFLICT' as const,
      message: 'lost',
      threadId: 't',
      expectedIndex: 1,
      actualIndex: 2,
    };
    m.calls[0]!.release({
      failed: [
        { threadId: 't', runId: 'r1', error: broken },
        { threadId: 't', runId: 'r2', error: lost },
      ],
    });
    await m.called(2);
    const stopped = scheduler.stop();
    m.calls[1]!.release();
    await stopped;
    expect(errors).toEqual([
      new Error('database unreachable'),
      { threadId: 't', runId: 'r1', error: broken },
    ]);
  });

  it('refuses a bad interval or page size', () => {
    const m = manualEngine();
    expect(() => startDeadlineScheduler(m.engine, { intervalMs: -1 })).toThrow(RangeError);
    expect(() => startDeadlineScheduler(m.engine, { pageSize: 0 })).toThrow(RangeError);
    expect(m.calls).toHaveLength(0);
  });
});
