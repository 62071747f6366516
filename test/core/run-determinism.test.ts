import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnyRunAction,
  createWorkflowState,
  hydrateWorkflowState,
  reduceRun,
  type WorkflowState,
  WorkflowStateSchema,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const fresh = () =>
  createWorkflowState(
    { workflowId: 'wf', goal: 'g', budgetUsd: 1, maxTokenBudget: 5000, maxIterations: 25 },
    { runId: 'run-1', now: NOW },
  );

// ─── Determinism and round trips ────────────────────────────────────

const key = fc.constantFrom('a', 'b', 'c', '_x', '_taint_registry');
const value = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null));
const node = fc.constantFrom('n1', 'n2', 'n3');
const id = fc.string({ minLength: 1, maxLength: 3 });

const actionArb: fc.Arbitrary<AnyRunAction> = fc.oneof(
  fc.record({
    id,
    type: fc.constant('update_memory' as const),
    payload: fc.record({ updates: fc.dictionary(key, value, { maxKeys: 3 }) }),
  }),
  fc.record({
    id,
    type: fc.constant('merge_parallel_results' as const),
    payload: fc.record({
      updates: fc.dictionary(key, value, { maxKeys: 3 }),
      input_keys: fc.array(key, { maxLength: 2 }),
    }),
  }),
  fc.record({ id, type: fc.constant('goto_node' as const), payload: fc.record({ node_id: node }) }),
  fc.record({
    id,
    type: fc.constant('handoff' as const),
    payload: fc.record({ node_id: node, supervisor_id: fc.constant('s'), reasoning: fc.string() }),
  }),
  fc.record({
    id,
    type: fc.constant('set_status' as const),
    payload: fc.record({
      status: fc.constantFrom('running', 'completed', 'failed', 'cancelled', 'retrying'),
    }),
  }),
  fc.record({
    id,
    type: fc.constant('request_human_input' as const),
    payload: fc.record({ timeout_ms: fc.integer({ min: 1, max: 10_000 }) }, { requiredKeys: [] }),
  }),
  fc.record({
    id,
    type: fc.constant('resume_from_human' as const),
    payload: fc.record({ decision: fc.constantFrom('approved', 'rejected') }),
  }),
  fc.record({
    id,
    type: fc.constant('update_memory' as const),
    payload: fc.record({
      updates: fc.dictionary(key, value, { maxKeys: 2 }),
      taint: fc.constant({ source: 'mcp_tool' as const }),
    }),
    compensation: fc.constant({ type: 'undo', payload: {} }),
  }),
  fc.record({
    type: fc.constant('_track_usage' as const),
    payload: fc.record({
      model: fc.constantFrom('gpt-4o', 'unknown-model'),
      input_tokens: fc.integer({ min: 0, max: 2000 }),
      output_tokens: fc.integer({ min: 0, max: 2000 }),
      cost_usd: fc.double({ min: 0, max: 0.4, noNaN: true }),
    }),
  }),
  fc.record({
    type: fc.constant('_fail' as const),
    payload: fc.record({ error: fc.string({ maxLength: 4 }) }),
  }),
  fc.constantFrom<AnyRunAction>(
    { type: '_retry', payload: {} },
    { type: '_complete', payload: {} },
    { type: '_cancel', payload: { rollback: true } },
    { type: '_timeout', payload: {} },
    { type: '_pop_compensation', payload: {} },
  ),
  fc.record({ type: fc.constant('_advance' as const), payload: fc.record({ node_id: node }) }),
);

/** Folds the actions; a refused action leaves the state as it was (as the engine would). */
function fold(actions: AnyRunAction[]) {
  let state = reduceOrKeep(fresh(), { type: '_init', payload: {} }, 0).state;
  const states: WorkflowState[] = [state];
  const events: unknown[] = [];
  actions.forEach((action, i) => {
    const step = reduceOrKeep(state, action, i + 1);
    state = step.state;
    states.push(state);
    events.push(step.result);
  });
  return { state, states, events };
}
function reduceOrKeep(state: WorkflowState, action: AnyRunAction, i: number) {
  const now = new Date(Date.parse(NOW) + i * 1000).toISOString();
  const result = reduceRun(state, action, { now, limits: { maxValueBytes: 8 } });
  return { state: result.ok ? result.value.state : state, result };
}

describe('determinism', () => {
  it('the same action list always gives deep-equal state and events', () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 30 }), (actions) => {
        const a = fold(actions);
        const b = fold(structuredClone(actions));
        expect(b.state).toEqual(a.state);
        expect(b.events).toEqual(a.events);
      }),
      { numRuns: 200 },
    );
  });

  it('every state round-trips through JSON and WorkflowStateSchema unchanged', () => {
    fc.assert(
      fc.property(fc.array(actionArb, { maxLength: 30 }), (actions) => {
        for (const state of fold(actions).states) {
          const json = JSON.parse(JSON.stringify(state));
          expect(json).toEqual(state);
          expect(WorkflowStateSchema.parse(json)).toEqual(state);
          expect(hydrateWorkflowState(json)).toEqual(state);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('never mutates the input state', () => {
    fc.assert(
      fc.property(fc.array(actionArb, { minLength: 1, maxLength: 20 }), (actions) => {
        const { states } = fold(actions.slice(0, -1));
        const last = states.at(-1)!;
        const snapshot = structuredClone(last);
        reduceRun(deepFreeze(last), actions.at(-1)!, { now: '2026-02-01T00:00:00.000Z' });
        expect(last).toEqual(snapshot);
      }),
      { numRuns: 150 },
    );
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

describe('plain JSON only', () => {
  it('refuses -0, which would not survive a JSON round trip', () => {
    const result = reduceRun(
      fresh(),
      { id: 'a', type: 'update_memory', payload: { updates: { x: -0 } } },
      { now: NOW },
    );
    expect(result).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
  });
});
