/**
 * Values that are not plain JSON (a cycle, a bigint) or nest too deeply, given to the engine's
 * run commands, over a real SQLite file: each is VALIDATION_FAILED naming the path, with or
 * without an idempotency key, and nothing is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WeftError } from '../../src/core/errors.js';
import { MAX_JSON_DEPTH } from '../../src/core/run/index.js';
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

const cyclic = () => {
  const value: Record<string, unknown> = { ok: 1 };
  value.self = value;
  return value;
};

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

/** Runs `command`, expects VALIDATION_FAILED with one issue at `path`, and no write. */
async function refusedAt(
  command: () => Promise<{ ok: boolean }>,
  path: string,
  reason: string | RegExp,
) {
  const before = await footprint(engine.store);
  const error = failure((await command()) as Parameters<typeof failure>[0]) as WeftError;
  expect(error).toMatchObject({
    code: 'VALIDATION_FAILED',
    issues: [{ path, message: expect.stringMatching(reason) }],
  });
  expect(await footprint(engine.store)).toEqual(before);
}

const memoryWrite = (value: unknown) =>
  ({ type: 'update_memory', payload: { updates: { a: { b: value } } } }) as never;

describe('engine run commands refuse values that are not plain JSON', () => {
  for (const idempotencyKey of [undefined, 'key-1']) {
    const keyed = idempotencyKey === undefined ? 'without a key' : 'with an idempotency key';
    const key = idempotencyKey === undefined ? {} : { idempotencyKey };

    it(`dispatch of a circular memory value is VALIDATION_FAILED at its path (${keyed})`, async () => {
      const { runId } = await runOnThread();
      await refusedAt(
        () => engine.dispatch({ runId, action: memoryWrite(cyclic()), ...key }),
        '$.payload.updates.a.b.self',
        /cycle/,
      );
      // The run still takes a plain write afterwards.
      must(await engine.dispatch({ runId, action: memoryWrite({ fine: true }) }));
    });

    it(`dispatch of a bigint memory value is VALIDATION_FAILED at its path (${keyed})`, async () => {
      const { runId } = await runOnThread();
      await refusedAt(
        () => engine.dispatch({ runId, action: memoryWrite(2n ** 64n), ...key }),
        '$.payload.updates.a.b',
        /bigint/,
      );
    });

    it(`dispatch of a very deep value is VALIDATION_FAILED, not a stack overflow (${keyed})`, async () => {
      const { runId } = await runOnThread();
      const before = await footprint(engine.store);
      const result = await engine.dispatch({
        runId,
        action: memoryWrite(nested(100_000)),
        ...key,
      });
      expect(failure(result)).toMatchObject({
        code: 'VALIDATION_FAILED',
        issues: [{ message: expect.stringContaining(`deeper than ${MAX_JSON_DEPTH}`) }],
      });
      expect(await footprint(engine.store)).toEqual(before);
    });
  }

  it('startRun with circular initial memory is VALIDATION_FAILED at $.memory…', async () => {
    engine = await openEngine(backend);
    const { threadId } = must(await engine.createThread({}));
    await refusedAt(
      () => engine.startRun({ threadId, goal: 'g', memory: { a: { b: cyclic() } } as never }),
      '$.memory.a.b.self',
      /cycle/,
    );
  });

  it('resolveApproval with circular memory updates is VALIDATION_FAILED at its path', async () => {
    const { runId } = await runOnThread();
    must(await engine.dispatch({ runId, action: { type: 'request_human_input', payload: {} } }));
    await refusedAt(
      () =>
        engine.resolveApproval({
          runId,
          decision: 'approve',
          memoryUpdates: { a: { b: cyclic() } } as never,
        }),
      '$.payload.memory_updates.a.b.self',
      /cycle/,
    );
  });
});

describe('a keyed resolveApproval names the path the core uses', () => {
  it('circular memory updates with an idempotency key: $.payload.memory_updates…', async () => {
    const { runId } = await runOnThread();
    must(await engine.dispatch({ runId, action: { type: 'request_human_input', payload: {} } }));
    await refusedAt(
      () =>
        engine.resolveApproval({
          runId,
          decision: 'approve',
          memoryUpdates: { a: cyclic() } as never,
          idempotencyKey: 'k',
        }),
      '$.payload.memory_updates.a.self',
      /cycle/,
    );
  });
});
