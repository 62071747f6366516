import { describe, expect, it } from 'vitest';
import {
  type AnyRunAction,
  computeUsageCost,
  createWorkflowState,
  DEFAULT_PRICE_TABLE,
  type RunContext,
  type RunEvent,
  reduceRun,
  type WorkflowState,
  type WorkflowStateConfig,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';

function apply(state: WorkflowState, action: AnyRunAction, ctx: RunContext = { now: LATER }) {
  const result = reduceRun(state, action, ctx);
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}
const running = (config: Partial<WorkflowStateConfig> = {}) =>
  apply(createWorkflowState({ workflowId: 'wf', goal: 'g', ...config }, { runId: 'r', now: NOW }), {
    type: '_init',
    payload: { start_node: 'n1' },
  }).state;
const usage = (input: number, output: number, cost_usd?: number): AnyRunAction => ({
  type: '_track_usage',
  payload: {
    model: 'm',
    input_tokens: input,
    output_tokens: output,
    ...(cost_usd === undefined ? {} : { cost_usd }),
  },
});
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

describe('token budget', () => {
  it('exactly at the budget is fine; one token over fails the run', () => {
    const at = apply(running({ maxTokenBudget: 100 }), usage(60, 40));
    expect(at.state.total_tokens_used).toBe(100);
    expect(at.state.status).toBe('running');
    expect(ofType(at.events, 'budget_exceeded')).toEqual([]);

    const over = apply(at.state, usage(1, 0));
    expect(over.state.status).toBe('failed');
    expect(over.state.last_error).toMatch(/token budget/);
    expect(ofType(over.events, 'budget_exceeded')).toEqual([
      { type: 'budget_exceeded', kind: 'tokens', total: 101, limit: 100 },
    ]);
    expect(ofType(over.events, 'status_changed')).toEqual([
      { type: 'status_changed', from: 'running', to: 'failed', reason: 'budget_exceeded' },
    ]);
  });

  it('does not retry a budget failure', () => {
    const { state } = apply(running({ maxTokenBudget: 10, maxRetries: 3 }), usage(11, 0));
    expect(state).toMatchObject({ status: 'failed', retry_count: 0 });
  });
});

describe('USD budget', () => {
  it('exactly at the budget fails the run', () => {
    const half = apply(running({ budgetUsd: 1 }), usage(0, 0, 0.5));
    expect(half.state.status).toBe('running');
    const full = apply(half.state, usage(0, 0, 0.5));
    expect(full.state.total_cost_usd).toBe(1);
    expect(full.state.status).toBe('failed');
    expect(ofType(full.events, 'budget_exceeded')).toEqual([
      { type: 'budget_exceeded', kind: 'usd', total: 1, limit: 1 },
    ]);
  });

  it('a hair below the budget is fine, and float drift does not leave the total a hair below', () => {
    const below = apply(running({ budgetUsd: 0.3 }), usage(0, 0, 0.29999));
    expect(below.state.status).toBe('running');
    let state = running({ budgetUsd: 0.3 });
    for (let i = 0; i < 3; i++) state = apply(state, usage(0, 0, 0.1)).state;
    expect(state.total_cost_usd).toBe(0.3);
    expect(state.status).toBe('failed');
  });

  it('a jump from 0 % to 95 % fires 50, 75, 90 once each, in order, and never again', () => {
    const jump = apply(running({ budgetUsd: 10 }), usage(0, 0, 9.5));
    expect(ofType(jump.events, 'budget_threshold_crossed')).toEqual([
      { type: 'budget_threshold_crossed', percent: 50, total_cost_usd: 9.5, budget_usd: 10 },
      { type: 'budget_threshold_crossed', percent: 75, total_cost_usd: 9.5, budget_usd: 10 },
      { type: 'budget_threshold_crossed', percent: 90, total_cost_usd: 9.5, budget_usd: 10 },
    ]);
    expect(jump.state.budget_thresholds_fired).toEqual([50, 75, 90]);
    expect(jump.state.status).toBe('running');

    const more = apply(jump.state, usage(0, 0, 0.1));
    expect(ofType(more.events, 'budget_threshold_crossed')).toEqual([]);
    expect(more.state.budget_thresholds_fired).toEqual([50, 75, 90]);

    const done = apply(more.state, usage(0, 0, 0.4));
    expect(ofType(done.events, 'budget_threshold_crossed').map((e) => e.percent)).toEqual([100]);
    expect(done.state.budget_thresholds_fired).toEqual([50, 75, 90, 100]);
    expect(done.state.status).toBe('failed');
    expect(done.events.map((e) => e.type)).toEqual([
      'usage_recorded',
      'budget_threshold_crossed',
      'budget_exceeded',
      'status_changed',
    ]);

    // Usage reported after the failure is still charged, but fires nothing again.
    const late = apply(done.state, usage(0, 0, 1));
    expect(late.state.total_cost_usd).toBe(11);
    expect(late.events.map((e) => e.type)).toEqual(['usage_recorded']);
    expect(late.state.status).toBe('failed');
  });

  it('thresholds fire one at a time when spend creeps up', () => {
    let state = running({ budgetUsd: 100 });
    const fired: number[] = [];
    for (const step of [49, 1, 24, 1, 14, 1]) {
      const r = apply(state, usage(0, 0, step));
      fired.push(...ofType(r.events, 'budget_threshold_crossed').map((e) => e.percent));
      state = r.state;
    }
    expect(fired).toEqual([50, 75, 90]);
  });
});

describe('charging', () => {
  it('charges failed attempts to the run, the model and the node', () => {
    let state = running({ maxRetries: 1 });
    state = apply(state, usage(100, 10)).state;
    state = apply(state, { type: '_fail', payload: { error: 'timeout' } }).state;
    expect(state.status).toBe('retrying');
    state = apply(state, usage(100, 10)).state; // the failed attempt's usage arrives late
    state = apply(state, { type: '_retry', payload: {} }).state;
    state = apply(state, usage(100, 10)).state;
    expect(state.total_tokens_used).toBe(330);
    expect(state.model_breakdown.m?.calls).toBe(3);
    expect(state.node_breakdown.n1).toEqual({
      input_tokens: 300,
      output_tokens: 30,
      cost_usd: 0,
      calls: 3,
    });
  });

  it('still charges usage reported on a terminal run', () => {
    const failed = apply(running(), {
      type: '_fail',
      payload: { error: 'x', retryable: false },
    }).state;
    const { state } = apply(failed, usage(5, 5, 0.01));
    expect(state.status).toBe('failed');
    expect([state.total_tokens_used, state.total_cost_usd]).toEqual([10, 0.01]);
  });

  it('prices from the table when cost_usd is absent, and the table is configurable', () => {
    expect(computeUsageCost('gpt-4o', 1_000_000, 1_000_000)).toEqual({
      cost_usd: 12.5,
      priced: true,
    });
    expect(DEFAULT_PRICE_TABLE['gpt-4o']).toBeDefined();
    const prices = { mine: { input_per_mtok: 1, output_per_mtok: 2 } };
    const { state } = apply(
      running(),
      {
        type: '_track_usage',
        payload: { model: 'mine', input_tokens: 500_000, output_tokens: 500_000 },
      },
      { now: LATER, prices },
    );
    expect(state.total_cost_usd).toBe(1.5);
    expect(state.total_input_tokens).toBe(500_000);
    expect(state.total_output_tokens).toBe(500_000);
  });

  it('reports an unknown model as unpriced (cost 0) instead of guessing', () => {
    const { state, events } = apply(running(), {
      type: '_track_usage',
      payload: { model: 'mystery', input_tokens: 10, output_tokens: 0 },
    });
    expect(state.total_cost_usd).toBe(0);
    expect(events).toContainEqual({ type: 'usage_unpriced', model: 'mystery' });
  });

  it('prefers an explicit node id and falls back to the current node', () => {
    const { state } = apply(running(), {
      type: '_track_usage',
      payload: { model: 'm', node_id: 'other', input_tokens: 1, output_tokens: 1 },
    });
    expect(Object.keys(state.node_breakdown)).toEqual(['other']);
  });
});
