import { describe, expect, it } from 'vitest';
import type { Result, WeftError } from '../../src/core/errors.js';
import { getFrontier } from '../../src/core/graph/index.js';
import {
  type Committed,
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCancelRun,
  planCreateThread,
  planDispatch,
  planRecordUsage,
  planResolveApproval,
  planStartRun,
  type ThreadEvent,
  type ThreadState,
} from '../../src/core/thread/index.js';
import {
  createSession,
  failure,
  fingerprint,
  must,
  type Session,
} from './support/thread-fixtures.js';

/**
 * A thread with a system node, a running run `r1` that has memory and a compensation, and a
 * completed run `done`: enough state for every refusal below to have something to spoil.
 */
function populated(): Session {
  const s = createSession();
  s.commit(planCreateThread('t1', {}));
  s.commit(planAppendNodes(s.state, [{ kind: 'system', payload: 'sys' }], s.now()));
  s.commit(planStartRun(s.state, { runId: 'r1', goal: 'g' }, s.now()));
  s.commit(
    planDispatch(
      s.state,
      {
        runId: 'r1',
        action: {
          id: 'a1',
          type: 'update_memory',
          payload: { updates: { k: 1 } },
          compensation: { type: 'undo', payload: {} },
        },
      },
      s.now(),
    ),
  );
  s.commit(planStartRun(s.state, { runId: 'done', goal: 'g2' }, s.now()));
  s.commit(
    planDispatch(
      s.state,
      {
        runId: 'done',
        action: { id: 'fin', type: 'set_status', payload: { status: 'completed' } },
      },
      s.now(),
    ),
  );
  return s;
}

/** Commits without the session, so a thrown error surfaces as a marker instead of a crash. */
function commitOrThrown(state: ThreadState, event: ThreadEvent): Result<Committed> | 'threw' {
  try {
    return commitEvent(state, event, { id: 'bad', recordedAt: '2026-03-02T00:00:00.000Z' });
  } catch {
    return 'threw';
  }
}

/** Asserts the commit is a Result error with `code` and that `state` still reads as before. */
function expectRefused(state: ThreadState, event: ThreadEvent, code: WeftError['code']) {
  const before = fingerprint(state);
  const result = commitOrThrown(state, event);
  expect(result).not.toBe('threw');
  const error = failure(result as Result<Committed>);
  expect(error.code).toBe(code);
  expect(fingerprint(state)).toBe(before);
  return error;
}

describe('a failing command writes nothing', () => {
  it('unknown run: every planner says NOT_FOUND, and so does commit', () => {
    const s = populated();
    const before = fingerprint(s.state);
    const runId = 'nope';
    const errors = [
      planDispatch(
        s.state,
        { runId, action: { id: 'x', type: 'goto_node', payload: { node_id: 'n' } } },
        s.now(),
      ),
      planRecordUsage(s.state, { runId, model: 'm', inputTokens: 1, outputTokens: 1 }),
      planCancelRun(s.state, { runId }),
      planResolveApproval(s.state, { runId, actionId: 'x', decision: 'ok' }, s.now()),
      planAppendNodes(s.state, [{ kind: 'inference', payload: 1, runId }], s.now()),
    ].map((result: Result<unknown>) => failure(result));
    for (const error of errors) expect(error).toMatchObject({ code: 'NOT_FOUND', id: runId });

    expectRefused(
      s.state,
      { type: 'usage_recorded', runId, model: 'm', inputTokens: 1, outputTokens: 1 },
      'NOT_FOUND',
    );
    expectRefused(
      s.state,
      { type: 'run_cancelled', runId, reason: 'x', rollback: true },
      'NOT_FOUND',
    );
    expect(fingerprint(s.state)).toBe(before);
  });

  it('unknown parent: UNKNOWN_PARENT at planning and at commit', () => {
    const s = populated();
    const before = fingerprint(s.state);
    const missing = 'cw_000000000000000000000000';
    expect(
      failure(
        planAppendNodes(s.state, [{ kind: 'inference', payload: 1, parents: [missing] }], s.now()),
      ),
    ).toMatchObject({ code: 'UNKNOWN_PARENT', nodeId: missing });
    expect(fingerprint(s.state)).toBe(before);
    // A recorded node naming a parent the graph lacks (the id is what it would recompute to).
    const error = expectRefused(
      s.state,
      {
        type: 'nodes_appended',
        nodes: [{ id: 'cw_whatever', kind: 'inference', parents: [missing], payload: 1 }],
      },
      'UNKNOWN_PARENT',
    );
    expect(error).toMatchObject({ nodeId: missing });
  });

  it('a recorded node whose id does not match its content is refused', () => {
    const s = populated();
    const [good] = must(
      planAppendNodes(s.state, [{ kind: 'inference', payload: { n: 1 } }], s.now()),
    ).nodes;
    expectRefused(
      s.state,
      { type: 'nodes_appended', nodes: [{ ...good!, payload: { n: 2 } }] },
      'NODE_ID_MISMATCH',
    );
  });

  it('a batch whose second node is corrupt leaves no trace of the first', () => {
    const s = populated();
    const planned = must(
      planAppendNodes(
        s.state,
        [
          { kind: 'inference', payload: 'first' },
          { kind: 'answer', payload: 'second' },
        ],
        s.now(),
      ),
    );
    const corrupt = {
      ...planned,
      nodes: [planned.nodes[0]!, { ...planned.nodes[1]!, payload: 'x' }],
    };
    expectRefused(s.state, corrupt, 'NODE_ID_MISMATCH');
    // The same state still accepts the good batch, and the result is as if nothing had happened.
    const fresh = populated();
    const good = must(commitEvent(s.state, planned, { id: 'e6', recordedAt: s.now() }));
    const reference = must(commitEvent(fresh.state, planned, { id: 'e6', recordedAt: s.now() }));
    expect(fingerprint(good.state)).toBe(fingerprint(reference.state));
  });

  it('illegal transition: set_status on a completed run is INVALID_TRANSITION', () => {
    const s = populated();
    const before = fingerprint(s.state);
    const action = { id: 'again', type: 'set_status', payload: { status: 'running' } } as const;
    expect(failure(planDispatch(s.state, { runId: 'done', action }, s.now()))).toMatchObject({
      code: 'INVALID_TRANSITION',
      from: 'completed',
      to: 'running',
    });
    expect(fingerprint(s.state)).toBe(before);
    const error = expectRefused(
      s.state,
      { type: 'run_action_dispatched', runId: 'done', action, memoryNodes: [] },
      'INVALID_TRANSITION',
    );
    expect(error).toMatchObject({ from: 'completed', to: 'running' });
    expectRefused(
      s.state,
      { type: 'run_cancelled', runId: 'done', reason: 'late', rollback: true },
      'INVALID_TRANSITION',
    );
  });

  it('a dispatch whose memory nodes fail leaves the run as it was', () => {
    const s = populated();
    const planned = must(
      planDispatch(
        s.state,
        { runId: 'r1', action: { id: 'm', type: 'update_memory', payload: { updates: { z: 1 } } } },
        s.now(),
      ),
    );
    const broken = {
      ...planned,
      memoryNodes: planned.memoryNodes.map((n) => ({ ...n, parents: ['cw_missing'] })),
    };
    const before = s.state.runs.get('r1');
    expectRefused(s.state, broken, 'UNKNOWN_PARENT');
    expect(s.state.runs.get('r1')).toBe(before);
  });

  it('non-JSON values are VALIDATION_FAILED naming the path', () => {
    const s = populated();
    const before = fingerprint(s.state);
    const planned = failure(
      planAppendNodes(
        s.state,
        [{ kind: 'inference', payload: { a: { b: [1, Number.NaN] } } }],
        s.now(),
      ),
    );
    expect(planned.code).toBe('VALIDATION_FAILED');
    expect(planned.code === 'VALIDATION_FAILED' && planned.issues[0]?.path).toBe(
      '$[0].payload.a.b[1]',
    );
    const memory = failure(
      planDispatch(
        s.state,
        {
          runId: 'r1',
          action: {
            id: 'nan',
            type: 'update_memory',
            payload: { updates: { x: { y: Number.NaN } } },
          },
        },
        s.now(),
      ),
    );
    expect(memory.code).toBe('VALIDATION_FAILED');
    // The run schema validates memory values as a union, so its path ends at the offending key.
    expect(memory.code === 'VALIDATION_FAILED' && memory.issues[0]?.path).toMatch(
      /^\$\.payload\.updates\.x/,
    );
    expect(fingerprint(s.state)).toBe(before);

    const error = expectRefused(
      s.state,
      {
        type: 'nodes_appended',
        nodes: [
          { id: 'cw_x', kind: 'inference', parents: [], payload: { a: { b: [1, Number.NaN] } } },
        ],
      },
      'VALIDATION_FAILED',
    );
    expect(error.code === 'VALIDATION_FAILED' && error.issues[0]?.path).toBe(
      '$.event.nodes[0].payload.a.b[1]',
    );
    const undef = expectRefused(
      s.state,
      {
        type: 'usage_recorded',
        runId: 'r1',
        model: 'm',
        inputTokens: 1,
        outputTokens: 1,
        costUsd: Number.POSITIVE_INFINITY,
      },
      'VALIDATION_FAILED',
    );
    expect(undef.code === 'VALIDATION_FAILED' && undef.issues[0]?.path).toBe('$.event.costUsd');
  });

  it('events that do not fit the state are refused', () => {
    const machine = createThreadMachine();
    const initial = machine.initial;
    const before = fingerprint(initial);
    expectRefused(
      initial,
      { type: 'nodes_appended', nodes: [{ id: 'cw_x', kind: 'system', parents: [], payload: 1 }] },
      'VALIDATION_FAILED',
    );
    expectRefused(
      initial,
      { type: 'thread_forked', threadId: 't2', fromThreadId: 't1', upToIndex: 0 },
      'VALIDATION_FAILED',
    );
    expect(fingerprint(initial)).toBe(before);

    const s = populated();
    expectRefused(s.state, must(planCreateThread('t1', {})), 'VALIDATION_FAILED');
    expectRefused(s.state, { type: 'made_up' } as unknown as ThreadEvent, 'VALIDATION_FAILED');
    // A run that already exists cannot start again, even with a hand-made event.
    const fresh = must(planStartRun(s.state, { runId: 'r9', goal: 'g' }, s.now()));
    expectRefused(s.state, { ...fresh, runId: 'r1' }, 'VALIDATION_FAILED');
    expect(getFrontier(s.state.graph)).toHaveLength(1);
  });

  it('an approval resolution for a run that is not waiting is refused at commit', () => {
    const s = populated();
    expectRefused(
      s.state,
      {
        type: 'approval_resolved',
        runId: 'r1',
        action: { id: 'ok', type: 'resume_from_human', payload: { decision: 'approve' } },
        memoryNodes: [],
      },
      'INVALID_ACTION',
    );
  });

  it('a WorkflowState newer than this build is refused', () => {
    const s = populated();
    const raw = {
      ...structuredClone(s.state.runs.get('r1')!),
      run_id: 'ext',
      state_schema_version: 99,
    };
    expectRefused(
      s.state,
      { type: 'workflow_state_imported', runId: 'ext', state: raw as never },
      'SCHEMA_VERSION_UNSUPPORTED',
    );
  });

  // Invariant: core functions that fail on input return a Result. A run configuration the run
  // reducer rejects (max_iterations must be positive) must come back as an error value — from
  // planStartRun or from commitEvent — and must not escape as an exception.
  it('an invalid run configuration is refused as a Result, never thrown', () => {
    const s = populated();
    const before = fingerprint(s.state);
    const planned = planStartRun(s.state, { runId: 'r2', goal: 'g', maxIterations: 0 }, s.now());
    if (planned.ok) {
      const result = commitOrThrown(s.state, planned.value);
      expect(result, 'commitEvent threw instead of returning an error').not.toBe('threw');
      expect(failure(result as Result<Committed>).code).toBe('VALIDATION_FAILED');
    } else {
      expect(planned.error.code).toBe('VALIDATION_FAILED');
    }
    expect(fingerprint(s.state)).toBe(before);
  });
});
