/** Building blocks shared by the public and internal halves of the run reducer. */
import { WeftFailure } from '../errors.js';
import type { PriceTable } from './budget.js';
import type { RunEvent } from './events.js';
import type { RetryPolicy } from './lifecycle.js';
import { transitionTo } from './lifecycle.js';
import { appendBounded, type MemoryLimits } from './memory.js';
import { type CompensationEntry, MAX_VISITED_NODES, type WorkflowState } from './schema.js';
import { isTerminalStatus } from './status.js';

/** What a reduction needs from outside: the logged time, prices and limits. */
export interface RunContext {
  /** ISO time of the log entry being applied; the reducer never reads a clock. */
  now: string;
  prices?: PriceTable;
  limits?: MemoryLimits;
  /** Backoff used for the `delay_ms` of `retry_scheduled` events. */
  retryPolicy?: RetryPolicy;
}

export interface RunReduction {
  state: WorkflowState;
  events: RunEvent[];
}

/** One reduction step: a new state and the events it produced. */
export type Step = RunReduction;

/** Chains steps, concatenating their events. */
export function chain(first: Step, ...fns: Array<(state: WorkflowState) => Step>): Step {
  let state = first.state;
  const events = [...first.events];
  for (const fn of fns) {
    const next = fn(state);
    state = next.state;
    events.push(...next.events);
  }
  return { state, events };
}

export const unchanged = (state: WorkflowState): Step => ({ state, events: [] });

export function invalidAction(state: WorkflowState, message: string): never {
  throw new WeftFailure({ code: 'INVALID_ACTION', runId: state.run_id, message });
}

// ─── Shared steps ───────────────────────────────────────────────────

/** Counts one dispatch; going above max_iterations fails an active run. */
export function countIteration(state: WorkflowState, now: string): Step & { exceeded: boolean } {
  const iteration_count = state.iteration_count + 1;
  const next = { ...state, iteration_count };
  if (iteration_count <= state.max_iterations || isTerminalStatus(state.status)) {
    return { state: next, events: [], exceeded: false };
  }
  const failed = transitionTo(next, 'failed', now, {
    reason: 'iteration_limit_exceeded',
    last_error: `Iteration limit exceeded: dispatch ${iteration_count} is above max_iterations ${state.max_iterations}.`,
  });
  return {
    state: failed.state,
    events: [
      {
        type: 'iteration_limit_exceeded',
        iteration_count,
        max_iterations: state.max_iterations,
      },
      ...failed.events,
    ],
    exceeded: true,
  };
}

/** Entering a node: current_node, visited_nodes (ring buffer), and a fresh retry budget. */
export function enterNode(
  state: WorkflowState,
  nodeId: string,
  via: Extract<RunEvent, { type: 'node_entered' }>['via'],
): Step {
  return {
    state: {
      ...state,
      current_node: nodeId,
      visited_nodes: appendBounded(state.visited_nodes, [nodeId], MAX_VISITED_NODES),
      retry_count: 0,
    },
    events: [{ type: 'node_entered', node_id: nodeId, via }],
  };
}

export function pushCompensation(state: WorkflowState, entry: CompensationEntry): Step {
  return {
    state: { ...state, compensation_stack: [...state.compensation_stack, entry] },
    events: [{ type: 'compensation_pushed', entry }],
  };
}

export function assertActive(state: WorkflowState, type: string): void {
  if (isTerminalStatus(state.status)) {
    invalidAction(state, `Run ${state.run_id} is ${state.status}; ${type} needs an active run.`);
  }
}
