import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import {
  type AnyRunAction,
  createWorkflowState,
  MAX_JSON_DEPTH,
  reduceRun,
  type WorkflowState,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';

function running(): WorkflowState {
  const created = createWorkflowState({ workflowId: 'wf', goal: 'g' }, { runId: 'r', now: NOW });
  const started = reduceRun(created, { type: '_init', payload: {} }, { now: NOW });
  if (!started.ok) throw new Error(started.error.message);
  return started.value.state;
}

/** An update_memory action writing `value` at memory key `a`, nested under `b`. */
const writeAt = (value: unknown) =>
  ({ id: 'x', type: 'update_memory', payload: { updates: { a: { b: value } } } }) as AnyRunAction;

/** `levels` objects nested inside each other, with a number at the bottom. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

const cyclic = () => {
  const value: Record<string, unknown> = { ok: 1 };
  value.self = value;
  return value;
};

/** Each value no JSON text can carry faithfully, the path it is reported at, and the reason. */
const NOT_JSON: Array<[string, () => unknown, string, string]> = [
  ['a cycle', cyclic, '$.payload.updates.a.b.self', 'cycle back to $.payload.updates.a.b'],
  ['a bigint', () => 10n, '$.payload.updates.a.b', 'bigint is not JSON'],
  ['a function', () => () => 1, '$.payload.updates.a.b', 'function is not JSON'],
  ['a symbol key', () => ({ [Symbol('k')]: 1 }), '$.payload.updates.a.b', 'symbol key'],
  ['undefined in an array', () => [1, undefined], '$.payload.updates.a.b[1]', 'undefined'],
  [
    'an array hole',
    () => {
      const holed = [1, 2];
      delete holed[1];
      return holed;
    },
    '$.payload.updates.a.b[1]',
    'array hole',
  ],
  ['NaN', () => Number.NaN, '$.payload.updates.a.b', 'NaN is not JSON'],
  ['Infinity', () => Number.POSITIVE_INFINITY, '$.payload.updates.a.b', 'Infinity is not JSON'],
];

describe('run memory refuses values that are not plain JSON', () => {
  for (const [name, make, path, reason] of NOT_JSON) {
    it(`update_memory with ${name} is VALIDATION_FAILED at ${path}`, () => {
      const state = running();
      const result = reduceRun(state, writeAt(make()), { now: NOW });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        issues: [{ path, message: expect.stringContaining(reason) }],
      });
      expect(result.error.message).toContain(path);
    });
  }

  it('a cycle in another memory-writing action is refused the same way', () => {
    const action = {
      id: 'h',
      type: 'handoff',
      payload: { node_id: 'n', supervisor_id: 's', reasoning: 'r', memory_updates: cyclic() },
    } as AnyRunAction;
    const result = reduceRun(running(), action, { now: NOW });
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_FAILED', issues: [{ path: '$.payload.memory_updates.self' }] },
    });
  });

  it('a cycle in an internal action payload is refused, not a stack overflow', () => {
    const payload = cyclic();
    const action = {
      type: '_push_compensation',
      payload: { action_id: 'a', compensation_action: { type: 'undo', payload } },
    } as AnyRunAction;
    const result = reduceRun(running(), action, { now: NOW });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: 'VALIDATION_FAILED',
        issues: [{ path: '$.payload.compensation_action.payload.self' }],
      },
    });
  });

  it('nesting deeper than the bound is VALIDATION_FAILED naming where it goes too deep', () => {
    const state = running();
    // The action, payload, updates and a are the first four levels; the value at b is the fifth.
    const atBound = reduceRun(state, writeAt(nested(MAX_JSON_DEPTH - 4)), { now: NOW });
    expect(atBound.ok).toBe(true);
    for (const levels of [MAX_JSON_DEPTH - 3, 100_000]) {
      const result = reduceRun(state, writeAt(nested(levels)), { now: NOW });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      const [issue] = (result.error as { issues: { path: string; message: string }[] }).issues;
      expect(result.error.code).toBe('VALIDATION_FAILED');
      expect(issue!.path).toBe(`$.payload.updates.a.b${'.d'.repeat(MAX_JSON_DEPTH - 4)}`);
      expect(issue!.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    }
  });

  it('the initial memory of a new run refuses a cycle with its path', () => {
    const memory = { a: { b: cyclic() } };
    expect(() =>
      createWorkflowState({ workflowId: 'wf', goal: 'g', memory } as never, {
        runId: 'r',
        now: NOW,
      }),
    ).toThrow(
      expect.objectContaining({
        error: expect.objectContaining({
          code: 'VALIDATION_FAILED',
          issues: [{ path: '$.memory.a.b.self', message: expect.stringContaining('cycle') }],
        }),
      }),
    );
  });
});

describe('canonicalJson and bigint', () => {
  it('refuses a bigint anywhere instead of writing it as a number', () => {
    for (const value of [10n, { a: 1, b: [2, 2n ** 64n] }, [1n]]) {
      expect(() => canonicalJson(value)).toThrow(/bigint .*n is not JSON/);
    }
  });

  it('still writes plain numbers as before', () => {
    expect(canonicalJson({ b: 2, a: [1, 1.5, -3] })).toBe('{"a":[1,1.5,-3],"b":2}');
  });
});
