import type { ValidationIssue } from '../errors.js';
import { isNodeKind } from '../identity.js';
import type { ThreadEventType } from './events.js';

/**
 * A cheap structural check of a thread event read from a log, so that a corrupted or tampered
 * entry is reported as a validation error instead of failing somewhere inside apply. Payloads,
 * actions and states are checked in depth by the graph, the run reducer and the importers; this
 * only guarantees the fields apply reads have the types it expects. Pure.
 */
export function checkEventShape(event: unknown): readonly ValidationIssue[] {
  if (!isObject(event)) return [{ path: '$.event', message: 'event must be an object' }];
  // Most of a log: checked without building anything.
  if (event.type === 'nodes_appended' && isNodeList(event.nodes)) return NO_ISSUES;
  const issues: ValidationIssue[] = [];
  const check = CHECKS[event.type as ThreadEventType];
  if (check === undefined) {
    return [
      { path: '$.event.type', message: `unknown thread event type ${JSON.stringify(event.type)}` },
    ];
  }
  check(event, issues);
  return issues;
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

type Check = (event: Record<string, unknown>, issues: ValidationIssue[]) => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function need(
  issues: ValidationIssue[],
  event: Record<string, unknown>,
  field: string,
  test: (value: unknown) => boolean,
  what: string,
): void {
  if (!test(event[field])) issues.push({ path: `$.event.${field}`, message: `must be ${what}` });
}

const isString = (v: unknown) => typeof v === 'string';
const isOptionalString = (v: unknown) => v === undefined || typeof v === 'string';
const isBoolean = (v: unknown) => typeof v === 'boolean';
const isIndex = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;
const isCount = isIndex;
const isOptionalNumber = (v: unknown) =>
  v === undefined || (typeof v === 'number' && Number.isFinite(v));
/** Array.every semantics (holes are skipped), without a callback per item. */
function isStringArray(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const item: unknown = v[i];
    if (typeof item !== 'string' && (item !== undefined || i in v)) return false;
  }
  return true;
}

/** Checked on every node of every entry a replay reads: plain tests, no callbacks. */
function isRecordedNode(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { taint, usage } = value;
  return (
    typeof value.id === 'string' &&
    isNodeKind(value.kind) &&
    isStringArray(value.parents) &&
    value.payload !== undefined &&
    (value.resourceKey === undefined || typeof value.resourceKey === 'string') &&
    (value.advance === undefined || typeof value.advance === 'boolean') &&
    (value.runId === undefined || typeof value.runId === 'string') &&
    (taint === undefined || (isObject(taint) && typeof taint.source === 'string')) &&
    (usage === undefined || isUsage(usage))
  );
}

const isUsage = (v: unknown): boolean =>
  isObject(v) &&
  isString(v.model) &&
  isCount(v.inputTokens) &&
  isCount(v.outputTokens) &&
  isOptionalNumber(v.costUsd);

function isNodeList(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    if (!isRecordedNode(v[i]) && (v[i] !== undefined || i in v)) return false;
  }
  return true;
}

const creation: Check = (e, issues) => {
  need(issues, e, 'threadId', isString, 'a string');
  need(issues, e, 'metadata', (v) => v !== undefined, 'present (null for none)');
  need(issues, e, 'nodeTypes', Array.isArray, 'an array');
  need(issues, e, 'allowDynamicNodeTypes', isBoolean, 'a boolean');
};

/** An action recorded on a run, with the memory nodes it mirrored into the graph. */
const runAction: Check = (e, issues) => {
  need(issues, e, 'runId', isString, 'a string');
  need(issues, e, 'action', isObject, 'an object');
  need(issues, e, 'memoryNodes', isNodeList, 'an array of recorded nodes');
};

const checkpointRecord: Check = (e, issues) => {
  need(issues, e, 'checkpointId', (v) => isString(v) && v !== '', 'a non-empty string');
  need(issues, e, 'data', isObject, 'an object');
  need(issues, e, 'nodes', isNodeList, 'an array of recorded nodes');
};

const CHECKS: Record<ThreadEventType, Check> = {
  thread_created: creation,
  state_imported: (e, issues) => {
    creation(e, issues);
    need(issues, e, 'state', isObject, 'an AgentState object');
  },
  thread_forked: (e, issues) => {
    need(issues, e, 'threadId', isString, 'a string');
    need(issues, e, 'fromThreadId', isString, 'a string');
    need(issues, e, 'upToIndex', isIndex, 'a non-negative integer');
  },
  nodes_appended: (e, issues) => need(issues, e, 'nodes', isNodeList, 'an array of recorded nodes'),
  run_started: (e, issues) => {
    need(issues, e, 'runId', isString, 'a string');
    need(issues, e, 'config', isObject, 'an object');
    need(issues, e, 'goalNode', isRecordedNode, 'a recorded node');
  },
  run_action_dispatched: runAction,
  approval_resolved: runAction,
  run_cancelled: (e, issues) => {
    need(issues, e, 'runId', isString, 'a string');
    need(issues, e, 'reason', isString, 'a string');
    need(issues, e, 'rollback', isBoolean, 'a boolean');
  },
  usage_recorded: (e, issues) => {
    need(issues, e, 'runId', isString, 'a string');
    need(issues, e, 'nodeId', isOptionalString, 'a string when present');
    need(issues, e, 'model', isString, 'a string');
    need(issues, e, 'inputTokens', isCount, 'a non-negative integer');
    need(issues, e, 'outputTokens', isCount, 'a non-negative integer');
    need(issues, e, 'costUsd', isOptionalNumber, 'a finite number when present');
  },
  deadline_fired: (e, issues) => {
    need(issues, e, 'runId', isString, 'a string');
    need(
      issues,
      e,
      'deadline',
      (v) => v === 'approval' || v === 'execution',
      "'approval' or 'execution'",
    );
    need(issues, e, 'dueAt', isString, 'an ISO timestamp');
  },
  workflow_state_imported: (e, issues) => {
    need(issues, e, 'runId', isString, 'a string');
    need(issues, e, 'state', isObject, 'a WorkflowState object');
  },
  checkpoint_saved: (e, issues) => {
    checkpointRecord(e, issues);
    need(issues, e, 'parentCheckpointId', isOptionalString, 'a string when present');
  },
  checkpoint_writes_saved: (e, issues) => {
    checkpointRecord(e, issues);
    need(issues, e, 'taskId', isString, 'a string');
  },
  checkpoints_cleared: () => {},
  nodes_redacted: (e, issues) => {
    need(issues, e, 'reason', isString, 'a string');
    need(issues, e, 'actor', isOptionalString, 'a string when present');
    need(issues, e, 'nodes', isRedactedList, 'a non-empty list of {id, index, digest}');
  },
};

const isRedactedList = (v: unknown) =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.every(
    (n) =>
      isObject(n) && typeof n.id === 'string' && isIndex(n.index) && typeof n.digest === 'string',
  );
