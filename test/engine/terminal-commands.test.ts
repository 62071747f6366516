/**
 * Commands on a run in a terminal status, on the engine over a real SQLite file: repeating the
 * status the run is already in succeeds and writes nothing; any other move out of a terminal
 * status is INVALID_TRANSITION {from, to} and writes nothing (except the saga rollback
 * failed | timeout → cancelled, which is recorded).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WeftError } from '../../src/core/errors.js';
import type { RunResult } from '../../src/engine/index.js';
import {
  failure,
  footprint,
  must,
  openEngine,
  sqliteBackend,
  type TestEngine,
  useBackend,
} from './support.js';

const backend = useBackend(sqliteBackend());
let engine: TestEngine;

afterEach(async () => {
  await engine?.close();
});

async function runOnThread() {
  engine = await openEngine(backend);
  const { threadId } = must(await engine.createThread({}));
  const { runId } = must(await engine.startRun({ threadId, goal: 'g' }));
  return { threadId, runId };
}

const logLength = async (threadId: string) => (await engine.store.readEntries(threadId)).length;

const setStatus = (runId: string, status: string, extra: Record<string, unknown> = {}) =>
  engine.dispatch({ runId, action: { type: 'set_status', payload: { status, ...extra } } });

/** Runs `command` and checks it succeeds with `status` while the database stays as it was. */
async function writesNothing(
  threadId: string,
  command: () => Promise<{ ok: boolean }>,
  status: string,
): Promise<RunResult> {
  const before = await footprint(engine.store);
  const entries = await logLength(threadId);
  const result = must((await command()) as Parameters<typeof must<RunResult>>[0]);
  expect(result.status).toBe(status);
  expect(result.logLength).toBe(entries);
  expect(await logLength(threadId)).toBe(entries);
  expect(await footprint(engine.store)).toEqual(before);
  return result;
}

/** Runs `command` and checks its typed error while the database stays as it was. */
async function refused(
  threadId: string,
  command: () => Promise<{ ok: boolean }>,
  expected: Partial<WeftError>,
) {
  const before = await footprint(engine.store);
  const entries = await logLength(threadId);
  expect(failure((await command()) as Parameters<typeof failure>[0])).toMatchObject(expected);
  expect(await logLength(threadId)).toBe(entries);
  expect(await footprint(engine.store)).toEqual(before);
}

describe('repeating a terminal status writes nothing', () => {
  it('cancelRun on a cancelled run succeeds and appends no second run_cancelled entry', async () => {
    const { threadId, runId } = await runOnThread();
    const first = must(await engine.cancelRun({ runId, reason: 'user' }));
    expect(first.status).toBe('cancelled');
    const again = await writesNothing(
      threadId,
      () => engine.cancelRun({ runId, reason: 'user' }),
      'cancelled',
    );
    expect(again).toEqual(first);
    await writesNothing(threadId, () => engine.cancelRun({ runId, rollback: true }), 'cancelled');
    const cancels = (await engine.store.readEntries(threadId)).filter(
      (e) => (e.event as { type?: string }).type === 'run_cancelled',
    );
    expect(cancels).toHaveLength(1);
  });

  it('set_status to the terminal status the run is in writes nothing', async () => {
    for (const status of ['completed', 'failed', 'cancelled', 'timeout']) {
      const { threadId, runId } = await runOnThread();
      const first = must(await setStatus(runId, status));
      const iterations = must(await engine.getState(threadId)).runs.get(runId)!.iteration_count;
      const again = await writesNothing(threadId, () => setStatus(runId, status), status);
      expect(again).toEqual(first);
      expect(must(await engine.getState(threadId)).runs.get(runId)!.iteration_count).toBe(
        iterations,
      );
      await engine.close();
    }
  });

  it('a failed run is still cancelled once (saga rollback), then the cancel repeats as nothing', async () => {
    const { threadId, runId } = await runOnThread();
    must(await setStatus(runId, 'failed'));
    const entries = await logLength(threadId);
    const cancelled = must(await engine.cancelRun({ runId, rollback: true }));
    expect(cancelled.status).toBe('cancelled');
    expect(await logLength(threadId)).toBe(entries + 1);
    await writesNothing(threadId, () => engine.cancelRun({ runId }), 'cancelled');
    await writesNothing(threadId, () => setStatus(runId, 'cancelled'), 'cancelled');
  });

  it('a repeat under a new idempotency key writes nothing either', async () => {
    const { threadId, runId } = await runOnThread();
    must(await engine.cancelRun({ runId, idempotencyKey: 'k1' }));
    await writesNothing(
      threadId,
      () => engine.cancelRun({ runId, idempotencyKey: 'k2' }),
      'cancelled',
    );
  });
});

describe('another move out of a terminal status is INVALID_TRANSITION', () => {
  it('cancelRun on a completed run', async () => {
    const { threadId, runId } = await runOnThread();
    must(await setStatus(runId, 'completed'));
    await refused(threadId, () => engine.cancelRun({ runId }), {
      code: 'INVALID_TRANSITION',
      from: 'completed',
      to: 'cancelled',
    });
  });

  it('set_status to a different status on a terminal run', async () => {
    const { threadId, runId } = await runOnThread();
    must(await engine.cancelRun({ runId }));
    for (const to of ['running', 'completed', 'failed']) {
      await refused(threadId, () => setStatus(runId, to), {
        code: 'INVALID_TRANSITION',
        from: 'cancelled',
        to,
      });
    }
  });

  it('a malformed repeat is still VALIDATION_FAILED, not a silent success', async () => {
    const { threadId, runId } = await runOnThread();
    must(await setStatus(runId, 'completed'));
    await refused(threadId, () => setStatus(runId, 'completed', { bogus: 1 }), {
      code: 'VALIDATION_FAILED',
    });
  });
});
