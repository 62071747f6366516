import type { InternalRunAction } from './actions.js';
import { applyUsage } from './budget.js';
import {
  assertCanTransition,
  computeRetryDelayMs,
  drainCompensation,
  transitionTo,
} from './lifecycle.js';
import { recordLessonEntry, recordTaint, stripUndefined } from './memory.js';
import type { WorkflowState } from './schema.js';
import {
  assertActive,
  chain,
  countIteration,
  enterNode,
  invalidAction,
  pushCompensation,
  type RunContext,
  type Step,
  unchanged,
} from './steps.js';

/** Engine-only actions; see `reduceRun` for the shared contract. */
export function reduceInternal(
  state: WorkflowState,
  action: InternalRunAction,
  ctx: RunContext,
): Step {
  const { now } = ctx;
  switch (action.type) {
    case '_init': {
      if (state.status !== 'pending' && state.status !== 'scheduled') {
        assertCanTransition(state, 'running'); // terminal → INVALID_TRANSITION
        invalidAction(
          state,
          `Run ${state.run_id} is already ${state.status}; _init only starts a pending or scheduled run.`,
        );
      }
      const startNode = action.payload.start_node;
      return chain(
        state.status === 'pending' ? transitionTo(state, 'scheduled', now) : unchanged(state),
        (s) => transitionTo(s, 'running', now),
        (s) => unchanged({ ...s, started_at: s.started_at ?? now }),
        (s) => (startNode === undefined ? unchanged(s) : enterNode(s, startNode, 'init')),
      );
    }
    case '_fail': {
      const { error, retryable } = action.payload;
      if (retryable !== false && state.retry_count < state.max_retries) {
        const attempt = state.retry_count + 1;
        return chain(
          transitionTo(state, 'retrying', now, { reason: 'node_failed', last_error: error }),
          (s) => ({
            state: { ...s, retry_count: attempt },
            events: [
              {
                type: 'retry_scheduled',
                attempt,
                max_retries: state.max_retries,
                delay_ms: computeRetryDelayMs(attempt, ctx.retryPolicy),
                error,
              },
            ],
          }),
        );
      }
      return transitionTo(state, 'failed', now, {
        reason: retryable === false ? 'not_retryable' : 'retries_exhausted',
        last_error: error,
      });
    }
    case '_retry':
      if (state.status !== 'retrying') {
        assertCanTransition(state, 'running');
        invalidAction(
          state,
          `Run ${state.run_id} is ${state.status}, not retrying; _retry only resumes a retrying run.`,
        );
      }
      return transitionTo(state, 'running', now, { reason: 'retry' });
    case '_complete':
      return transitionTo(state, 'completed', now);
    case '_timeout': {
      const { kind = 'execution', reason } = action.payload;
      const message =
        reason ??
        (kind === 'approval'
          ? `Human input was not received by ${state.waiting_timeout_at ?? now}.`
          : `Run exceeded max_execution_time_ms (${state.max_execution_time_ms} ms).`);
      return transitionTo(state, 'timeout', now, {
        reason: `${kind}_timeout`,
        last_error: message,
      });
    }
    case '_cancel': {
      const { reason, rollback } = action.payload;
      return chain(transitionTo(state, 'cancelled', now, { reason }), (s) =>
        rollback === true ? drainCompensation(s) : unchanged(s),
      );
    }
    case '_advance':
      assertActive(state, '_advance');
      return enterNode(state, action.payload.node_id, 'advance');
    case '_track_usage':
      return applyUsage(state, action.payload, ctx);
    case '_push_compensation':
      assertActive(state, '_push_compensation');
      return pushCompensation(state, action.payload);
    case '_pop_compensation': {
      const top = state.compensation_stack.at(-1);
      if (top === undefined)
        invalidAction(state, `Run ${state.run_id} has no compensation to pop.`);
      return {
        state: { ...state, compensation_stack: state.compensation_stack.slice(0, -1) },
        events: [{ type: 'compensation_popped', entry: top, rollback: false }],
      };
    }
    case '_increment_iteration': {
      assertActive(state, '_increment_iteration');
      const { exceeded: _exceeded, ...step } = countIteration(state, now);
      return step;
    }
    case '_record_lessons': {
      const { entry_id, ...entry } = action.payload;
      return recordLessonEntry(state, entry_id, stripUndefined({ ...entry, retrieved_at: now }));
    }
    case '_taint':
      return recordTaint(state, action.payload.key, action.payload.metadata, now);
  }
}
