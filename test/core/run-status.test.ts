import { describe, expect, it } from 'vitest';
import {
  canTransitionStatus,
  createWorkflowState,
  isTerminalStatus,
  LIFECYCLE_EDGES,
  reduceRun,
  TERMINAL_STATUSES,
  WORKFLOW_STATUSES,
  type WorkflowState,
  type WorkflowStatus,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const base = createWorkflowState({ workflowId: 'wf', goal: 'g' }, { runId: 'run-1', now: NOW });
const inStatus = (status: WorkflowStatus): WorkflowState => ({ ...base, status });

/** The lifecycle's transition formula, written out independently of the implementation. */
const formula = (from: WorkflowStatus, to: WorkflowStatus): boolean =>
  from === to ||
  !['completed', 'failed', 'cancelled', 'timeout'].includes(from) ||
  (to === 'cancelled' && (from === 'failed' || from === 'timeout'));

const pairs = WORKFLOW_STATUSES.flatMap((from) =>
  WORKFLOW_STATUSES.map((to) => [from, to] as const),
);

describe('status guard', () => {
  it('has nine statuses, four terminal', () => {
    expect(WORKFLOW_STATUSES).toHaveLength(9);
    expect([...TERMINAL_STATUSES].sort()).toEqual(['cancelled', 'completed', 'failed', 'timeout']);
    expect(WORKFLOW_STATUSES.filter(isTerminalStatus)).toEqual([
      'completed',
      'failed',
      'cancelled',
      'timeout',
    ]);
  });

  it('covers all 81 pairs', () => {
    expect(pairs).toHaveLength(81);
    // 5 non-terminal × 9 targets + 4 terminal self-moves + failed/timeout → cancelled.
    expect(pairs.filter(([f, t]) => canTransitionStatus(f, t))).toHaveLength(45 + 4 + 2);
  });

  it.each(pairs)('canTransitionStatus(%s, %s) matches the formula', (from, to) => {
    expect(canTransitionStatus(from, to)).toBe(formula(from, to));
  });

  it('allows every edge of the lifecycle diagram', () => {
    for (const [from, to] of LIFECYCLE_EDGES) expect(canTransitionStatus(from, to)).toBe(true);
  });

  it('lets nothing but the saga rollback leave a terminal status', () => {
    expect(canTransitionStatus('completed', 'cancelled')).toBe(false);
    expect(canTransitionStatus('cancelled', 'failed')).toBe(false);
    expect(canTransitionStatus('failed', 'running')).toBe(false);
    expect(canTransitionStatus('timeout', 'cancelled')).toBe(true);
    expect(canTransitionStatus('failed', 'cancelled')).toBe(true);
  });
});

describe('reducer enforces the guard on set_status', () => {
  it.each(pairs)('set_status %s → %s', (from, to) => {
    const state = inStatus(from);
    const result = reduceRun(
      state,
      { id: 'a1', type: 'set_status', payload: { status: to } },
      { now: '2026-01-01T00:01:00.000Z' },
    );
    if (formula(from, to)) {
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.value.state.status).toBe(to);
      const changes = result.value.events.filter((e) => e.type === 'status_changed');
      expect(changes).toEqual(from === to ? [] : [{ type: 'status_changed', from, to }]);
    } else {
      expect(result).toEqual({
        ok: false,
        error: expect.objectContaining({ code: 'INVALID_TRANSITION', from, to }),
      });
    }
    expect(state.status).toBe(from); // input untouched
  });

  it('does not additionally enforce the lifecycle diagram between non-terminal statuses', () => {
    // pending → completed is not a diagram edge but passes the binding guard.
    const result = reduceRun(
      inStatus('pending'),
      { id: 'a1', type: 'set_status', payload: { status: 'completed' } },
      { now: NOW },
    );
    expect(result.ok && result.value.state.status).toBe('completed');
  });

  it('internal lifecycle actions are guarded too', () => {
    for (const type of ['_complete', '_fail', '_timeout'] as const) {
      const payload = type === '_fail' ? { error: 'x', retryable: false } : {};
      const result = reduceRun(inStatus('cancelled'), { type, payload } as never, { now: NOW });
      expect(result.ok ? 'ok' : result.error.code).toBe('INVALID_TRANSITION');
    }
    // Staying put is legal by the formula: completing a completed run is a no-op.
    const again = reduceRun(
      inStatus('completed'),
      { type: '_complete', payload: {} },
      { now: NOW },
    );
    expect(again.ok && again.value.events).toEqual([]);
    const cancel = reduceRun(inStatus('completed'), { type: '_cancel', payload: {} }, { now: NOW });
    expect(cancel).toMatchObject({
      ok: false,
      error: { code: 'INVALID_TRANSITION', from: 'completed', to: 'cancelled' },
    });
  });
});
