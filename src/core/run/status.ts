import { z } from 'zod';

/** Lifecycle statuses of a run, grouped initial / active / terminal. */
export const WORKFLOW_STATUSES = [
  'pending',
  'scheduled',
  'running',
  'waiting',
  'retrying',
  'completed',
  'failed',
  'cancelled',
  'timeout',
] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export const WorkflowStatusSchema = z.enum(WORKFLOW_STATUSES);

/** Statuses nothing leaves, except the saga-rollback move failed | timeout → cancelled. */
export const TERMINAL_STATUSES: ReadonlySet<WorkflowStatus> = new Set<WorkflowStatus>([
  'completed',
  'failed',
  'cancelled',
  'timeout',
]);

/** Why a run sits in `waiting`. */
export const WAITING_REASONS = [
  'human_approval',
  'external_event',
  'scheduled_time',
  'rate_limit',
  'resource_limit',
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];
export const WaitingReasonSchema = z.enum(WAITING_REASONS);

const STATUS_SET: ReadonlySet<string> = new Set(WORKFLOW_STATUSES);
export const isWorkflowStatus = (value: unknown): value is WorkflowStatus =>
  typeof value === 'string' && STATUS_SET.has(value);

/** Pure. True for completed, failed, cancelled and timeout. */
export function isTerminalStatus(status: WorkflowStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/**
 * The binding transition guard: staying put is always legal, every move out of a
 * non-terminal status is legal, and the only move out of a terminal status is the saga rollback
 * failed | timeout → cancelled. The reducer enforces exactly this and nothing stricter; the
 * lifecycle diagram (`LIFECYCLE_EDGES`) describes the path the engine normally drives.
 */
export function canTransitionStatus(from: WorkflowStatus, to: WorkflowStatus): boolean {
  return (
    from === to ||
    !isTerminalStatus(from) ||
    (to === 'cancelled' && (from === 'failed' || from === 'timeout'))
  );
}

/**
 * True when a command asks a run to enter the terminal status it is already in (cancel a
 * cancelled run, complete a completed one). Such a repeat changes nothing, so the engine answers
 * it with the run as it stands and records nothing: a client retrying after a lost response
 * gets success, and the log does not grow. Pure.
 */
export function repeatsTerminalStatus(from: WorkflowStatus, to: WorkflowStatus): boolean {
  return from === to && isTerminalStatus(from);
}

/**
 * The documented lifecycle diagram, for dashboards and documentation. It is
 * descriptive: the reducer does not reject a move between non-terminal statuses that is missing
 * here (e.g. waiting → failed when a budget runs out during a pause), because the guard above is
 * the binding contract.
 */
export const LIFECYCLE_EDGES: ReadonlyArray<readonly [WorkflowStatus, WorkflowStatus]> = [
  ['pending', 'scheduled'],
  ['scheduled', 'running'],
  ['running', 'completed'],
  ['running', 'waiting'],
  ['running', 'retrying'],
  ['running', 'failed'],
  ['running', 'cancelled'],
  ['running', 'timeout'],
  ['waiting', 'running'],
  ['retrying', 'running'],
  ['retrying', 'failed'],
  ['failed', 'cancelled'],
  ['timeout', 'cancelled'],
];
