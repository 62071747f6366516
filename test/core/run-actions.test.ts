import { describe, expect, it } from 'vitest';
import {
  type AnyRunAction,
  computeRetryDelayMs,
  createWorkflowState,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  getExpiredDeadline,
  getRunDeadlines,
  parseRunAction,
  planRollback,
  type RunContext,
  type RunEvent,
  reduceRun,
  type WorkflowState,
  type WorkflowStateConfig,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';

const newRun = (config: Partial<WorkflowStateConfig> = {}) =>
  createWorkflowState({ workflowId: 'wf', goal: 'g', ...config }, { runId: 'run-1', now: NOW });

function apply(state: WorkflowState, action: AnyRunAction, ctx: RunContext = { now: LATER }) {
  const result = reduceRun(state, action, ctx);
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}
const started = (config: Partial<WorkflowStateConfig> = {}) =>
  apply(newRun(config), { type: '_init', payload: { start_node: 'plan' } }).state;
const types = (events: RunEvent[]) => events.map((e) => e.type);
const errorOf = (state: WorkflowState, action: AnyRunAction) => {
  const result = reduceRun(state, action, { now: LATER });
  return result.ok ? undefined : result.error;
};

describe('createWorkflowState', () => {
  it('fills the WorkflowState defaults and takes time and id from the context', () => {
    const s = newRun({ constraints: ['short'], budgetUsd: 2, maxTokenBudget: 1000 });
    expect(s).toMatchObject({
      workflow_id: 'wf',
      run_id: 'run-1',
      status: 'pending',
      max_iterations: 50,
      max_execution_time_ms: 3_600_000,
      max_retries: 3,
      retry_count: 0,
      iteration_count: 0,
      constraints: ['short'],
      budget_usd: 2,
      max_token_budget: 1000,
      created_at: NOW,
      updated_at: NOW,
      state_schema_version: 2,
    });
    expect(s.started_at).toBeUndefined();
  });

  it('refuses invalid input with VALIDATION_FAILED', () => {
    expect(() => newRun({ maxIterations: 0 })).toThrowError(/maxIterations/);
    expect(() =>
      createWorkflowState({ workflowId: 'wf', goal: 'g' }, { runId: 'r', now: 'yesterday' }),
    ).toThrowError(/now/);
  });
});

describe('parseRunAction', () => {
  it('accepts a valid action and refuses internal or unknown types with a clear issue', () => {
    expect(parseRunAction({ id: 'a', type: 'goto_node', payload: { node_id: 'n' } }).ok).toBe(true);
    const internal = parseRunAction({ id: 'a', type: '_init', payload: {} });
    expect(internal).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_FAILED', issues: [{ path: '$.type' }] },
    });
    expect(!internal.ok && internal.error.message).toMatch(/internal/);
    expect(parseRunAction({ id: 'a', type: 'fly', payload: {} })).toMatchObject({
      ok: false,
      error: { issues: [{ path: '$.type' }] },
    });
  });

  it('names the offending payload field', () => {
    const bad = parseRunAction({
      id: 'a',
      type: 'request_human_input',
      payload: { timeout_ms: -1 },
    });
    expect(bad).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_FAILED', issues: [{ path: '$.payload.timeout_ms' }] },
    });
    const nan = parseRunAction({
      id: 'a',
      type: 'update_memory',
      payload: { updates: { x: Number.NaN } },
    });
    expect(nan.ok).toBe(false);
    const extra = parseRunAction({
      id: 'a',
      type: 'goto_node',
      payload: { node_id: 'n', oops: 1 },
    });
    expect(extra.ok).toBe(false);
  });

  it('is applied by reduceRun too, so an unvalidated action cannot slip in', () => {
    const result = reduceRun(started(), { id: 'a', type: 'goto_node', payload: {} } as never, {
      now: LATER,
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(
      reduceRun(
        started(),
        { id: 'a', type: 'goto_node', payload: { node_id: 'x' } },
        { now: 'soon' },
      ),
    ).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_FAILED', issues: [{ path: '$.now' }] },
    });
  });
});

describe('public actions', () => {
  it('update_memory merges into memory and counts an iteration', () => {
    const { state, events } = apply(started(), {
      id: 'a1',
      type: 'update_memory',
      payload: { updates: { notes: 'hi', n: 1 } },
    });
    expect(state.memory).toEqual({ notes: 'hi', n: 1 });
    expect(state.iteration_count).toBe(1);
    expect(state.updated_at).toBe(LATER);
    expect(types(events)).toEqual(['memory_written']);
  });

  it('set_status moves the status and records the error of a failure', () => {
    const { state, events } = apply(started(), {
      id: 'a1',
      type: 'set_status',
      payload: { status: 'failed', error: 'boom' },
    });
    expect(state.status).toBe('failed');
    expect(state.last_error).toBe('boom');
    expect(events).toEqual([{ type: 'status_changed', from: 'running', to: 'failed' }]);
  });

  it('goto_node enters the node and resets the retry count', () => {
    const retrying = { ...started(), retry_count: 2 };
    const { state, events } = apply(retrying, {
      id: 'a1',
      type: 'goto_node',
      payload: { node_id: 'write' },
    });
    expect(state.current_node).toBe('write');
    expect(state.visited_nodes).toEqual(['plan', 'write']);
    expect(state.retry_count).toBe(0);
    expect(events).toEqual([{ type: 'node_entered', node_id: 'write', via: 'goto_node' }]);
  });

  it('handoff enters the node, records the supervisor decision and merges memory', () => {
    const { state } = apply(started(), {
      id: 'a1',
      type: 'handoff',
      payload: {
        node_id: 'researcher',
        supervisor_id: 'boss',
        reasoning: 'needs facts',
        memory_updates: { brief: 'find X', _swarm_handoff_count: 1 },
      },
    });
    expect(state.current_node).toBe('researcher');
    expect(state.supervisor_history).toEqual([
      {
        supervisor_id: 'boss',
        delegated_to: 'researcher',
        reasoning: 'needs facts',
        iteration: 1,
        timestamp: LATER,
      },
    ]);
    expect(state.memory).toEqual({ brief: 'find X' });
    expect(state.swarm_handoff_count).toBe(1);
  });

  it('request_human_input pauses with a default 24 h timeout', () => {
    const { state, events } = apply(started(), {
      id: 'a1',
      type: 'request_human_input',
      payload: { pending_approval: { question: 'ship it?' } },
    });
    expect(DEFAULT_APPROVAL_TIMEOUT_MS).toBe(24 * 60 * 60 * 1000);
    expect(state).toMatchObject({
      status: 'waiting',
      waiting_for: 'human_approval',
      waiting_since: LATER,
      waiting_timeout_at: '2026-01-02T00:05:00.000Z',
      pending_approval: { question: 'ship it?' },
    });
    expect(events).toEqual([
      { type: 'status_changed', from: 'running', to: 'waiting', reason: 'human_approval' },
      {
        type: 'approval_requested',
        waiting_for: 'human_approval',
        pending_approval: { question: 'ship it?' },
        timeout_at: '2026-01-02T00:05:00.000Z',
      },
    ]);
    expect(getRunDeadlines(state).approvalTimeoutAt).toBe('2026-01-02T00:05:00.000Z');
  });

  it('request_human_input honours timeout_ms and refuses a second pause', () => {
    const { state } = apply(started(), {
      id: 'a1',
      type: 'request_human_input',
      payload: { waiting_for: 'external_event', timeout_ms: 60_000 },
    });
    expect(state.waiting_timeout_at).toBe('2026-01-01T00:06:00.000Z');
    expect(state.waiting_for).toBe('external_event');
    expect(state).not.toHaveProperty('pending_approval');
    expect(errorOf(state, { id: 'a2', type: 'request_human_input', payload: {} })?.code).toBe(
      'INVALID_ACTION',
    );
  });

  it('resume_from_human returns to running, clears the wait and records the decision', () => {
    const waiting = apply(started(), {
      id: 'a1',
      type: 'request_human_input',
      payload: { pending_approval: { q: 1 } },
    }).state;
    const { state, events } = apply(waiting, {
      id: 'a2',
      type: 'resume_from_human',
      payload: {
        decision: 'approved',
        response: { note: 'ok' },
        memory_updates: { extra: true, human_decision: 'spoofed' },
      },
    });
    expect(state.status).toBe('running');
    for (const key of ['waiting_for', 'waiting_since', 'waiting_timeout_at', 'pending_approval']) {
      expect(state).not.toHaveProperty(key);
    }
    expect(state.memory).toEqual({
      extra: true,
      human_decision: 'approved',
      human_response: { note: 'ok' },
    });
    expect(types(events)).toEqual(['status_changed', 'approval_resolved', 'memory_written']);
  });

  it('resume_from_human refuses a run that is not waiting', () => {
    expect(
      errorOf(started(), { id: 'a', type: 'resume_from_human', payload: { decision: 'approved' } }),
    ).toMatchObject({ code: 'INVALID_ACTION' });
    const timedOut = { ...started(), status: 'timeout' as const };
    expect(
      errorOf(timedOut, { id: 'a', type: 'resume_from_human', payload: { decision: 'approved' } }),
    ).toMatchObject({ code: 'INVALID_TRANSITION', from: 'timeout', to: 'running' });
  });

  it('merge_parallel_results merges through the same memory merge', () => {
    const { state } = apply(started(), {
      id: 'a1',
      type: 'merge_parallel_results',
      payload: { updates: { a: 1, b: [2], _sneaky: 3 }, total_tokens: 99 },
    });
    expect(state.memory).toEqual({ a: 1, b: [2] });
    expect(state.memory_drops.map((d) => [d.key, d.reason])).toEqual([['_sneaky', 'reserved_key']]);
    expect(state.total_tokens_used).toBe(0); // usage comes from metadata.token_usage only
  });

  it('an action with compensation pushes a compensation entry', () => {
    const { state, events } = apply(started(), {
      id: 'book-1',
      type: 'update_memory',
      payload: { updates: { booking: 'B1' } },
      compensation: { type: 'cancel_booking', payload: { id: 'B1' } },
    });
    const entry = {
      action_id: 'book-1',
      compensation_action: { type: 'cancel_booking', payload: { id: 'B1' } },
    };
    expect(state.compensation_stack).toEqual([entry]);
    expect(events).toContainEqual({ type: 'compensation_pushed', entry });
  });

  it('metadata.token_usage is charged to the run', () => {
    const { state } = apply(started(), {
      id: 'a1',
      type: 'goto_node',
      payload: { node_id: 'write' },
      metadata: {
        node_id: 'plan',
        model: 'm',
        token_usage: { input_tokens: 10, output_tokens: 5, cost_usd: 0.25 },
      },
    });
    expect(state.total_tokens_used).toBe(15);
    expect(state.node_breakdown.plan).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.25,
      calls: 1,
    });
  });

  it('refuses non-status actions on a terminal run with INVALID_ACTION and changes nothing', () => {
    const done = apply(started(), { type: '_complete', payload: {} }).state;
    for (const action of [
      { id: 'a', type: 'update_memory', payload: { updates: { x: 1 } } },
      { id: 'a', type: 'goto_node', payload: { node_id: 'n' } },
      { id: 'a', type: 'handoff', payload: { node_id: 'n', supervisor_id: 's', reasoning: '' } },
      { id: 'a', type: 'merge_parallel_results', payload: { updates: {} } },
    ] as const) {
      const error = errorOf(done, action);
      expect(error?.code).toBe('INVALID_ACTION');
      expect(error?.message).toMatch(/completed/);
    }
    expect(errorOf(done, { id: 'a', type: 'request_human_input', payload: {} })).toMatchObject({
      code: 'INVALID_TRANSITION',
      from: 'completed',
      to: 'waiting',
    });
  });
});

describe('iteration limit', () => {
  it('allows max_iterations dispatches and fails the run on the next one without applying it', () => {
    let state = started({ maxIterations: 3 });
    for (let i = 0; i < 3; i++) {
      state = apply(state, { id: `g${i}`, type: 'goto_node', payload: { node_id: `n${i}` } }).state;
    }
    expect(state.status).toBe('running');
    const { state: failed, events } = apply(state, {
      id: 'g3',
      type: 'goto_node',
      payload: { node_id: 'n3' },
      compensation: { type: 'undo', payload: {} },
    });
    expect(failed.status).toBe('failed');
    expect(failed.iteration_count).toBe(4);
    expect(failed.current_node).toBe('n2');
    expect(failed.compensation_stack).toEqual([]);
    expect(failed.last_error).toMatch(/Iteration limit/);
    expect(types(events)).toEqual(['iteration_limit_exceeded', 'status_changed']);
  });

  it('_increment_iteration counts against the same limit', () => {
    const s = { ...started({ maxIterations: 1 }), iteration_count: 1 };
    const { state } = apply(s, { type: '_increment_iteration', payload: {} });
    expect(state.iteration_count).toBe(2);
    expect(state.status).toBe('failed');
    const ok = apply(started(), { type: '_increment_iteration', payload: {} }).state;
    expect([ok.iteration_count, ok.status]).toEqual([1, 'running']);
  });
});

describe('internal actions', () => {
  it('_init goes pending → scheduled → running and stamps started_at', () => {
    const { state, events } = apply(newRun(), { type: '_init', payload: { start_node: 'plan' } });
    expect(state).toMatchObject({ status: 'running', started_at: LATER, current_node: 'plan' });
    expect(events.filter((e) => e.type === 'status_changed')).toEqual([
      { type: 'status_changed', from: 'pending', to: 'scheduled' },
      { type: 'status_changed', from: 'scheduled', to: 'running' },
    ]);
    expect(state.iteration_count).toBe(0);
    expect(errorOf(state, { type: '_init', payload: {} })?.code).toBe('INVALID_ACTION');
  });

  it('_fail retries while retries are left, then fails', () => {
    let state = started({ maxRetries: 2 });
    const first = apply(state, { type: '_fail', payload: { error: 'e1' } });
    expect(first.state).toMatchObject({ status: 'retrying', retry_count: 1, last_error: 'e1' });
    expect(first.events).toContainEqual({
      type: 'retry_scheduled',
      attempt: 1,
      max_retries: 2,
      delay_ms: 1000,
      error: 'e1',
    });
    state = apply(first.state, { type: '_retry', payload: {} }).state;
    expect(state.status).toBe('running');
    state = apply(state, { type: '_fail', payload: { error: 'e2' } }).state;
    expect(state.retry_count).toBe(2);
    state = apply(state, { type: '_retry', payload: {} }).state;
    const last = apply(state, { type: '_fail', payload: { error: 'e3' } }).state;
    expect(last).toMatchObject({ status: 'failed', last_error: 'e3', retry_count: 2 });
  });

  it('_fail with retryable false fails at once', () => {
    const { state } = apply(started(), {
      type: '_fail',
      payload: { error: 'fatal', retryable: false },
    });
    expect(state).toMatchObject({ status: 'failed', retry_count: 0 });
  });

  it('_retry refuses a run that is not retrying', () => {
    expect(errorOf(started(), { type: '_retry', payload: {} })?.code).toBe('INVALID_ACTION');
  });

  it('_complete completes', () => {
    expect(apply(started(), { type: '_complete', payload: {} }).state.status).toBe('completed');
  });

  it('_timeout times out with an explanatory last_error', () => {
    const { state } = apply(started(), { type: '_timeout', payload: { kind: 'execution' } });
    expect(state.status).toBe('timeout');
    expect(state.last_error).toMatch(/max_execution_time_ms/);
  });

  it('_cancel cancels; with rollback it drains the compensation stack LIFO', () => {
    let state = started();
    for (const id of ['c1', 'c2', 'c3']) {
      state = apply(state, {
        type: '_push_compensation',
        payload: { action_id: id, compensation_action: { type: 'undo', payload: { id } } },
      }).state;
    }
    expect(planRollback(state).map((e) => e.action_id)).toEqual(['c3', 'c2', 'c1']);
    const failed = apply(state, { type: '_fail', payload: { error: 'x', retryable: false } }).state;
    const { state: cancelled, events } = apply(failed, {
      type: '_cancel',
      payload: { reason: 'rollback', rollback: true },
    });
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.compensation_stack).toEqual([]);
    expect(cancelled.last_error).toBe('x');
    expect(
      events.flatMap((e) => (e.type === 'compensation_popped' ? [e.entry.action_id] : [])),
    ).toEqual(['c3', 'c2', 'c1']);
    expect(events[0]).toEqual({
      type: 'status_changed',
      from: 'failed',
      to: 'cancelled',
      reason: 'rollback',
    });
    const plain = apply(started(), { type: '_cancel', payload: {} }).state;
    expect(plain.status).toBe('cancelled');
  });

  it('_advance enters a node and resets retries; refused on a terminal run', () => {
    const s = { ...started(), retry_count: 1 };
    const { state } = apply(s, { type: '_advance', payload: { node_id: 'n2' } });
    expect(state).toMatchObject({
      current_node: 'n2',
      retry_count: 0,
      visited_nodes: ['plan', 'n2'],
    });
    const done = apply(state, { type: '_complete', payload: {} }).state;
    expect(errorOf(done, { type: '_advance', payload: { node_id: 'x' } })?.code).toBe(
      'INVALID_ACTION',
    );
  });

  it('_track_usage charges totals, by model and by node', () => {
    const { state } = apply(started(), {
      type: '_track_usage',
      payload: { model: 'gpt-4o', input_tokens: 1_000_000, output_tokens: 100_000 },
    });
    expect(state.total_cost_usd).toBe(3.5);
    expect(state.model_breakdown['gpt-4o']).toEqual({
      input_tokens: 1_000_000,
      output_tokens: 100_000,
      cost_usd: 3.5,
      calls: 1,
    });
    expect(state.node_breakdown.plan?.calls).toBe(1);
  });

  it('_push_compensation and _pop_compensation manage the stack', () => {
    const pushed = apply(started(), {
      type: '_push_compensation',
      payload: { action_id: 'a', compensation_action: { type: 'undo', payload: {} } },
    }).state;
    expect(pushed.compensation_stack).toHaveLength(1);
    const { state, events } = apply(pushed, { type: '_pop_compensation', payload: {} });
    expect(state.compensation_stack).toEqual([]);
    expect(events[0]).toMatchObject({ type: 'compensation_popped', rollback: false });
    expect(errorOf(state, { type: '_pop_compensation', payload: {} })?.code).toBe('INVALID_ACTION');
  });

  it('_record_lessons adds provenance stamped with now', () => {
    const { state } = apply(started(), {
      type: '_record_lessons',
      payload: { entry_id: 'e1', node_id: 'plan', fact_ids: ['f1'] },
    });
    expect(state.lesson_provenance).toEqual({
      e1: { node_id: 'plan', fact_ids: ['f1'], retrieved_at: LATER },
    });
  });

  it('_taint registers taint for a key', () => {
    const { state } = apply(started(), {
      type: '_taint',
      payload: { key: 'page', metadata: { source: 'mcp_tool', tool_name: 'fetch' } },
    });
    expect(state.taint_registry.page).toEqual({
      source: 'mcp_tool',
      tool_name: 'fetch',
      created_at: LATER,
    });
  });
});

describe('retries, deadlines', () => {
  it('computeRetryDelayMs is exponential, capped and deterministic', () => {
    expect([1, 2, 3, 4].map((n) => computeRetryDelayMs(n))).toEqual([1000, 2000, 4000, 8000]);
    expect(computeRetryDelayMs(30)).toBe(60_000);
    expect(computeRetryDelayMs(0)).toBe(1000);
    const policy = { baseMs: 100, maxMs: 1000, factor: 3 };
    expect(computeRetryDelayMs(3, policy)).toBe(900);
    const jittered = computeRetryDelayMs(3, { ...policy, jitterSeed: 'run-1' });
    expect(jittered).toBe(computeRetryDelayMs(3, { ...policy, jitterSeed: 'run-1' }));
    expect(jittered).toBeGreaterThanOrEqual(450);
    expect(jittered).toBeLessThanOrEqual(900);
  });

  it('getRunDeadlines reports the execution deadline once started, nothing when terminal', () => {
    expect(getRunDeadlines(newRun())).toEqual({});
    const s = started({ maxExecutionTimeMs: 60_000 });
    expect(getRunDeadlines(s)).toEqual({ executionDeadlineAt: '2026-01-01T00:06:00.000Z' });
    expect(getExpiredDeadline(s, '2026-01-01T00:05:59.999Z')).toBeUndefined();
    expect(getExpiredDeadline(s, '2026-01-01T00:06:00.000Z')).toBe('execution');
    expect(getRunDeadlines({ ...s, status: 'completed' })).toEqual({});
  });
});
