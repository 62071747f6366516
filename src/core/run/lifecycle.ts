import { WeftFailure } from '../errors.js';
import type { RunEvent } from './events.js';
import type { CompensationEntry, WorkflowState } from './schema.js';
import { canTransitionStatus, isTerminalStatus, type WorkflowStatus } from './status.js';

export interface TransitionOptions {
  reason?: string | undefined;
  last_error?: string | undefined;
}

/**
 * Moves the run to `to`, or throws a WeftFailure INVALID_TRANSITION {from, to} when the guard
 * refuses (never a silent no-op). Staying in the same status emits no event. Leaving `waiting`
 * clears the waiting fields and `pending_approval`; first entering `running` stamps `started_at`.
 * Pure.
 */
export function transitionTo(
  state: WorkflowState,
  to: WorkflowStatus,
  now: string,
  options: TransitionOptions = {},
): { state: WorkflowState; events: RunEvent[] } {
  const from = state.status;
  assertCanTransition(state, to);
  let next: WorkflowState = { ...state, status: to };
  if (options.last_error !== undefined) next.last_error = options.last_error;
  if (from === 'waiting' && to !== 'waiting') next = clearWaiting(next);
  if (to === 'running' && next.started_at === undefined) next.started_at = now;
  if (from === to) return { state: next, events: [] };
  const event: RunEvent = { type: 'status_changed', from, to };
  if (options.reason !== undefined) event.reason = options.reason;
  return { state: next, events: [event] };
}

/** Throws INVALID_TRANSITION {from, to} unless `canTransitionStatus(state.status, to)`. Pure. */
export function assertCanTransition(state: WorkflowState, to: WorkflowStatus): void {
  const from = state.status;
  if (canTransitionStatus(from, to)) return;
  throw new WeftFailure({
    code: 'INVALID_TRANSITION',
    from,
    to,
    message: isTerminalStatus(from)
      ? `Run ${state.run_id} is ${from}, a terminal status; it cannot move to ${to}. Only a failed or timed-out run may still be cancelled (saga rollback).`
      : `Run ${state.run_id} cannot move from ${from} to ${to}.`,
  });
}

/** A copy without the waiting fields and the pending approval. Pure. */
export function clearWaiting(state: WorkflowState): WorkflowState {
  const {
    waiting_for: _for,
    waiting_since: _since,
    waiting_timeout_at: _timeout,
    pending_approval: _approval,
    ...rest
  } = state;
  return rest;
}

export interface RetryPolicy {
  /** Delay of the first retry. Default 1,000 ms. */
  baseMs?: number;
  /** Ceiling of any delay. Default 60,000 ms. */
  maxMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
  /**
   * With a seed, "equal jitter": the delay lies in [d/2, d], chosen by a hash of seed and
   * attempt, so the same seed always gives the same delays. Without one there is no jitter.
   */
  jitterSeed?: string | number;
}

export const DEFAULT_RETRY_POLICY = { baseMs: 1_000, maxMs: 60_000, factor: 2 } as const;

/**
 * Exponential backoff for retry `attempt` (1-based; values below 1 count as 1):
 * `min(maxMs, baseMs * factor^(attempt-1))`, optionally jittered from `jitterSeed`.
 * Deterministic and pure; always a non-negative integer.
 */
export function computeRetryDelayMs(attempt: number, policy: RetryPolicy = {}): number {
  const baseMs = Math.max(0, policy.baseMs ?? DEFAULT_RETRY_POLICY.baseMs);
  const maxMs = Math.max(0, policy.maxMs ?? DEFAULT_RETRY_POLICY.maxMs);
  const factor = Math.max(1, policy.factor ?? DEFAULT_RETRY_POLICY.factor);
  const n = Math.max(1, Math.floor(Number.isFinite(attempt) ? attempt : 1));
  const raw = baseMs * factor ** (n - 1);
  const delay = Math.min(maxMs, Number.isFinite(raw) ? raw : maxMs);
  if (policy.jitterSeed === undefined) return Math.round(delay);
  const fraction = fnv1a(`${policy.jitterSeed}:${n}`) / 0x1_0000_0000;
  return Math.round(delay / 2 + (delay / 2) * fraction);
}

/** 32-bit FNV-1a: a tiny deterministic hash for jitter (not for security). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export interface RunDeadlines {
  /** When the current human-approval wait times out (only while `waiting`). */
  approvalTimeoutAt?: string;
  /** `started_at + max_execution_time_ms` (only once started, and while not terminal). */
  executionDeadlineAt?: string;
}

/**
 * The deadlines that can still fire for this run. The engine schedules them and, when one
 * passes, logs a `_timeout` action so replay stays deterministic. Pure.
 */
export function getRunDeadlines(state: WorkflowState): RunDeadlines {
  const deadlines: RunDeadlines = {};
  if (isTerminalStatus(state.status)) return deadlines;
  if (state.status === 'waiting' && state.waiting_timeout_at !== undefined) {
    deadlines.approvalTimeoutAt = state.waiting_timeout_at;
  }
  if (state.started_at !== undefined) {
    deadlines.executionDeadlineAt = addMs(state.started_at, state.max_execution_time_ms);
  }
  return deadlines;
}

/** Which deadline has passed at `now`, if any (approval first). Pure. */
export function getExpiredDeadline(
  state: WorkflowState,
  now: string,
): 'approval' | 'execution' | undefined {
  const at = Date.parse(now);
  const { approvalTimeoutAt, executionDeadlineAt } = getRunDeadlines(state);
  if (approvalTimeoutAt !== undefined && Date.parse(approvalTimeoutAt) <= at) return 'approval';
  if (executionDeadlineAt !== undefined && Date.parse(executionDeadlineAt) <= at)
    return 'execution';
  return undefined;
}

/** ISO time plus a duration, as an ISO string. Pure. */
export function addMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

/** The compensations to run for a saga rollback, most recent first (LIFO). Pure. */
export function planRollback(state: WorkflowState): CompensationEntry[] {
  return [...state.compensation_stack].reverse();
}

/**
 * Pops every compensation entry, LIFO, into `compensation_popped` events for the runtime to
 * execute, leaving the stack empty. Pure.
 */
export function drainCompensation(state: WorkflowState): {
  state: WorkflowState;
  events: RunEvent[];
} {
  const events: RunEvent[] = planRollback(state).map((entry) => ({
    type: 'compensation_popped',
    entry,
    rollback: true,
  }));
  return { state: { ...state, compensation_stack: [] }, events };
}
