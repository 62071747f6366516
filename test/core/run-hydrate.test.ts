import { describe, expect, it } from 'vitest';
import { isWeftFailure } from '../../src/core/errors.js';
import {
  CURRENT_STATE_SCHEMA_VERSION,
  createWorkflowState,
  getInjectedFactIds,
  getLessonProvenance,
  hydrateWorkflowState,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const fresh = () =>
  createWorkflowState(
    { workflowId: 'wf', goal: 'g', budgetUsd: 1, maxTokenBudget: 5000, maxIterations: 1000 },
    { runId: 'run-1', now: NOW },
  );

function failureOf(fn: () => unknown) {
  try {
    fn();
  } catch (caught) {
    if (isWeftFailure(caught)) return caught.error;
    throw caught;
  }
  throw new Error('expected a WeftFailure');
}

const v1Snapshot = {
  // no state_schema_version: pre-versioning snapshots are v1
  workflow_id: 'wf',
  run_id: 'run-1',
  goal: 'research',
  status: 'waiting',
  created_at: NOW,
  updated_at: NOW,
  waiting_for: 'human_approval',
  _cost_alert_thresholds_fired: [0.5, 0.75],
  budget_usd: 2,
  memory: {
    notes: 'kept',
    _taint_registry: { notes: { source: 'mcp_tool', tool_name: 'search', created_at: NOW } },
    _lesson_provenance: {
      e2: { node_id: 'b', fact_ids: ['f3', 'f1'], retrieved_at: '2026-01-01T00:02:00.000Z' },
      e1: { node_id: 'a', fact_ids: ['f1', 'f2'], retrieved_at: '2026-01-01T00:01:00.000Z' },
    },
    _pending_approval: { question: 'ok?' },
    _policy_approved: { deploy: true },
    _subgraph_stack: ['parent-graph'],
    _swarm_handoff_count: 4,
    _subgraph_resume_child1: { child: 'checkpoint' },
    _custom_engine_key: 'unknown keys stay',
  },
  memory_drops: [{ key: 'big', reason: 'oversized', bytes: 99999, timestamp: NOW }],
};

describe('hydrateWorkflowState', () => {
  it('migrates a v1 snapshot, lifting every engine-owned memory key', () => {
    const s = hydrateWorkflowState(structuredClone(v1Snapshot));
    expect(s.state_schema_version).toBe(CURRENT_STATE_SCHEMA_VERSION);
    expect(s.memory).toEqual({ notes: 'kept', _custom_engine_key: 'unknown keys stay' });
    expect(s.taint_registry).toEqual({
      notes: { source: 'mcp_tool', tool_name: 'search', created_at: NOW },
    });
    expect(Object.keys(s.lesson_provenance).sort()).toEqual(['e1', 'e2']);
    expect(s.pending_approval).toEqual({ question: 'ok?' });
    expect(s.policy_approvals).toEqual({ deploy: true });
    expect(s.subgraph_stack).toEqual(['parent-graph']);
    expect(s.swarm_handoff_count).toBe(4);
    expect(s.subgraph_checkpoints).toEqual({ child1: { child: 'checkpoint' } });
    expect(s.budget_thresholds_fired).toEqual([50, 75]);
    expect(s.memory_drops).toEqual([
      { key: 'big', reason: 'oversized', bytes: 99999, limit: 65536, at: NOW },
    ]);
    // defaults filled
    expect(s).toMatchObject({
      max_iterations: 50,
      max_retries: 3,
      iteration_count: 0,
      total_cost_usd: 0,
    });
    expect(hydrateWorkflowState(s)).toEqual(s); // idempotent on v2
  });

  it('accepts state_schema_version 1 explicitly and in-memory Date values', () => {
    const s = hydrateWorkflowState({
      ...structuredClone(v1Snapshot),
      state_schema_version: 1,
      created_at: new Date(NOW),
    });
    expect(s.created_at).toBe(NOW);
  });

  it('refuses a snapshot from a newer engine', () => {
    const error = failureOf(() =>
      hydrateWorkflowState({ ...fresh(), state_schema_version: CURRENT_STATE_SCHEMA_VERSION + 1 }),
    );
    expect(error).toMatchObject({ code: 'SCHEMA_VERSION_UNSUPPORTED', version: 3, supported: 2 });
  });

  it('refuses malformed state with VALIDATION_FAILED naming the field', () => {
    expect(failureOf(() => hydrateWorkflowState('nope'))).toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    const bad = failureOf(() => hydrateWorkflowState({ ...fresh(), status: 'exploded' }));
    expect(bad).toMatchObject({ code: 'VALIDATION_FAILED', issues: [{ path: '$.status' }] });
    const extra = failureOf(() => hydrateWorkflowState({ ...fresh(), surprise: 1 }));
    expect(extra.code).toBe('VALIDATION_FAILED');
    const version = failureOf(() =>
      hydrateWorkflowState({ ...fresh(), state_schema_version: 'x' }),
    );
    expect(version).toMatchObject({ issues: [{ path: '$.state_schema_version' }] });
  });
});

describe('lesson provenance readers', () => {
  it('order entries by retrieved_at and dedupe fact ids in first-occurrence order', () => {
    const s = hydrateWorkflowState(structuredClone(v1Snapshot));
    expect(getLessonProvenance(s).map((e) => e.node_id)).toEqual(['a', 'b']);
    expect(getInjectedFactIds(s)).toEqual(['f1', 'f2', 'f3']);
  });
});
