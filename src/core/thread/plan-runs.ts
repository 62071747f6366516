/**
 * Planning the events of runs: starting one, dispatching its actions and resolving its approvals
 * (with the memory they write mirrored as graph nodes), cancelling it, recording usage, importing
 * a WorkflowState, and the deadlines due.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result, type WeftError } from '../errors.js';
import { createSemanticDraft, getFrontier, getNode, type NodeDraft } from '../graph/index.js';
import type { JsonObject, JsonValue } from '../json.js';
import {
  type AnyRunAction,
  checkTokenRoom,
  findPlainJsonIssue,
  getExpiredDeadline,
  getRunDeadlines,
  parseRunAction,
  runTokenTotals,
  WorkflowStateConfigSchema,
} from '../run/index.js';
// Internal to the core (not re-exported): reduceRun for an action that was parsed already.
import { reduceParsedRun } from '../run/reducer.js';
import type {
  ApprovalResolvedEvent,
  DeadlineFiredEvent,
  RecordedNode,
  RunActionDispatchedEvent,
  RunCancelledEvent,
  RunStartedEvent,
  UsageRecordedEvent,
  WorkflowStateImportedEvent,
} from './events.js';
import { notFound, resolveNodes } from './plan-nodes.js';
import type { ThreadState } from './state.js';

export interface StartRunInput {
  runId: string;
  goal: string;
  workflowId?: string;
  constraints?: string[];
  maxTokenBudget?: number;
  budgetUsd?: number;
  maxIterations?: number;
  maxRetries?: number;
  maxExecutionTimeMs?: number;
  memory?: JsonObject;
}

/**
 * A run starts with a `goal` node whose parents are the latest system node and the frontier,
 * so every run is anchored in the thread's causal history.
 */
export function planStartRun(
  state: ThreadState,
  input: StartRunInput,
  now: string,
): Result<RunStartedEvent> {
  if (state.runs.has(input.runId)) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `run ${input.runId} already exists`,
      issues: [{ path: '$.runId', message: 'duplicate run id' }],
    });
  }
  const parents = new Set(getFrontier(state.graph));
  if (state.latestSystemNodeId !== undefined) parents.add(state.latestSystemNodeId);
  const payload: JsonObject = { goal: input.goal, runId: input.runId };
  if (input.constraints && input.constraints.length > 0) payload.constraints = input.constraints;
  const resolved = resolveNodes(
    state.graph,
    [{ kind: 'goal', payload, parents: [...parents] }],
    now,
  );
  if (!resolved.ok) return resolved;
  const config: JsonObject = { workflowId: input.workflowId ?? input.runId, goal: input.goal };
  const optional: Array<[keyof StartRunInput, JsonValue | undefined]> = [
    ['constraints', input.constraints],
    ['maxTokenBudget', input.maxTokenBudget],
    ['budgetUsd', input.budgetUsd],
    ['maxIterations', input.maxIterations],
    ['maxRetries', input.maxRetries],
    ['maxExecutionTimeMs', input.maxExecutionTimeMs],
    ['memory', input.memory],
  ];
  for (const [key, value] of optional) if (value !== undefined) config[key] = value;
  const notJson = findPlainJsonIssue(config);
  if (notJson !== undefined) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `Invalid run configuration: ${notJson.path}: ${notJson.message}`,
      issues: [notJson],
    });
  }
  const parsedConfig = WorkflowStateConfigSchema.safeParse(config);
  if (!parsedConfig.success) {
    const issues = parsedConfig.error.issues.map((issue) => ({
      path: ['$', ...issue.path.map(String)].join('.'),
      message: issue.message,
    }));
    return err({
      code: 'VALIDATION_FAILED',
      message: `Invalid run configuration: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    });
  }
  return ok({
    type: 'run_started',
    runId: input.runId,
    config,
    goalNode: { ...resolved.value[0]!, runId: input.runId },
  });
}

export interface DispatchInput {
  runId: string;
  action: JsonObject;
}

/**
 * Records a public action. Memory keys the action writes are mirrored as `semantic:memory:<key>`
 * nodes, so run memory has versions and provenance in the graph.
 */
export function planDispatch(
  state: ThreadState,
  input: DispatchInput,
  now: string,
): Result<RunActionDispatchedEvent> {
  const run = state.runs.get(input.runId);
  if (!run)
    return err(notFound('Run', input.runId, `run ${input.runId} does not exist in this thread`));
  const action = parseRunAction(input.action);
  if (!action.ok) return action;
  const memoryNodes = mirrorMemory(state, input.runId, action.value, now);
  if (!memoryNodes.ok) return memoryNodes;
  return ok({
    type: 'run_action_dispatched',
    runId: input.runId,
    action: input.action,
    memoryNodes: memoryNodes.value,
  });
}

/**
 * The `semantic:memory:<key>` nodes mirroring the memory keys `action` would write (changed
 * values only), so run memory has versions and provenance in the graph — none when the thread's
 * vocabulary has no `memory` type. Reduces the action on the current run to find out; a reducer
 * error is returned as is (the dispatch reduces it again and reports it).
 */
function mirrorMemory(
  state: ThreadState,
  runId: string,
  action: AnyRunAction,
  now: string,
): Result<RecordedNode[]> {
  const { config } = state.graph;
  // A thread whose own vocabulary leaves out `memory` keeps run memory in the run only: the
  // mirror is provenance, not a reason to refuse the run's action.
  if (!config.allowDynamicNodeTypes && !config.nodeTypes.some((t) => t.name === 'memory')) {
    return ok([]);
  }
  const run = state.runs.get(runId)!;
  const reduced = reduceParsedRun(run, action, { now });
  if (!reduced.ok) return reduced;
  const after = reduced.value.state.memory;
  const drafts: NodeDraft[] = [];
  for (const key of Object.keys(after).sort()) {
    const value = after[key] as JsonValue;
    if (key in run.memory && canonicalJson(run.memory[key]) === canonicalJson(value)) continue;
    const draft = createSemanticDraft(state.graph, { type: 'memory', key, content: value });
    if (!draft.ok) return draft;
    drafts.push(draft.value);
  }
  if (drafts.length === 0) return ok([]);
  const resolved = resolveNodes(state.graph, drafts, now);
  if (!resolved.ok) return resolved;
  return ok(resolved.value.map((node) => ({ ...node, runId })));
}

export interface ResolveApprovalInput {
  runId: string;
  actionId: string;
  decision: string;
  response?: JsonValue;
  memoryUpdates?: JsonObject;
}

export function planResolveApproval(
  state: ThreadState,
  input: ResolveApprovalInput,
  now: string,
): Result<ApprovalResolvedEvent> {
  const run = state.runs.get(input.runId);
  if (!run) {
    return err(notFound('Run', input.runId, `run ${input.runId} does not exist in this thread`));
  }
  if (run.status !== 'waiting') {
    return err({
      code: 'INVALID_TRANSITION',
      message: `run ${input.runId} is ${run.status}, not waiting for approval`,
      from: run.status,
      to: 'running',
    });
  }
  const payload: JsonObject = { decision: input.decision };
  if (input.response !== undefined) payload.response = input.response;
  if (input.memoryUpdates !== undefined) payload.memory_updates = input.memoryUpdates;
  const action: JsonObject = { id: input.actionId, type: 'resume_from_human', payload };
  const parsed = parseRunAction(action);
  if (!parsed.ok) return parsed;
  const memoryNodes = mirrorMemory(state, input.runId, parsed.value, now);
  if (!memoryNodes.ok) return memoryNodes;
  return ok({
    type: 'approval_resolved',
    runId: input.runId,
    action,
    memoryNodes: memoryNodes.value,
  });
}

export function planCancelRun(
  state: ThreadState,
  input: { runId: string; reason?: string; rollback?: boolean },
): Result<RunCancelledEvent> {
  if (!state.runs.has(input.runId)) {
    return err(notFound('Run', input.runId, `run ${input.runId} does not exist in this thread`));
  }
  return ok({
    type: 'run_cancelled',
    runId: input.runId,
    reason: input.reason ?? 'cancelled',
    rollback: input.rollback ?? true,
  });
}

export function planRecordUsage(
  state: ThreadState,
  input: {
    runId: string;
    nodeId?: string;
    model: string;
    inputTokens: number;
    outputTokens: number;
    costUsd?: number;
  },
): Result<UsageRecordedEvent> {
  if (!state.runs.has(input.runId)) {
    return err(notFound('Run', input.runId, `run ${input.runId} does not exist in this thread`));
  }
  if (input.nodeId !== undefined && !getNode(state.graph, input.nodeId)) {
    return err(
      notFound('CausalNode', input.nodeId, `node ${input.nodeId} does not exist in this thread`),
    );
  }
  const overflow = checkTokenRoom(
    [
      { input: state.spend.inputTokens, output: state.spend.outputTokens },
      ...runTokenTotals(state.runs.get(input.runId)!, input.model, input.nodeId),
    ],
    input.inputTokens,
    input.outputTokens,
    { input: '$.inputTokens', output: '$.outputTokens' },
  );
  if (overflow !== undefined) return err(overflow);
  const event: UsageRecordedEvent = {
    type: 'usage_recorded',
    runId: input.runId,
    model: input.model,
    inputTokens: input.inputTokens,
    outputTokens: input.outputTokens,
  };
  if (input.nodeId !== undefined) event.nodeId = input.nodeId;
  if (input.costUsd !== undefined) event.costUsd = input.costUsd;
  return ok(event);
}

export function planImportWorkflowState(
  state: ThreadState,
  raw: unknown,
): Result<WorkflowStateImportedEvent> {
  const runId =
    raw && typeof raw === 'object' && typeof (raw as { run_id?: unknown }).run_id === 'string'
      ? (raw as { run_id: string }).run_id
      : undefined;
  if (runId === undefined) {
    return err({
      code: 'VALIDATION_FAILED',
      message: 'a WorkflowState needs a string run_id',
      issues: [{ path: '$.state.run_id', message: 'missing or not a string' }],
    });
  }
  if (state.runs.has(runId)) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `run ${runId} already exists in this thread`,
      issues: [{ path: '$.state.run_id', message: 'duplicate run id' }],
    });
  }
  const overflow = importedTokenOverflow(raw as Record<string, unknown>);
  if (overflow !== undefined) return err(overflow);
  return ok({ type: 'workflow_state_imported', runId, state: raw as JsonObject });
}

/** An imported state's token totals must be servable too (see MAX_TOKEN_TOTAL). */
function importedTokenOverflow(raw: Record<string, unknown>): WeftError | undefined {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const room = (input: unknown, output: unknown, paths: { input: string; output: string }) =>
    checkTokenRoom([{ input: 0, output: 0 }], n(input), n(output), paths);
  const totals =
    room(raw.total_input_tokens, raw.total_output_tokens, {
      input: '$.state.total_input_tokens',
      output: '$.state.total_output_tokens',
    }) ??
    room(0, raw.total_tokens_used, {
      input: '$.state.total_tokens_used',
      output: '$.state.total_tokens_used',
    });
  if (totals !== undefined) return totals;
  for (const breakdown of ['model_breakdown', 'node_breakdown'] as const) {
    const entries = raw[breakdown];
    if (typeof entries !== 'object' || entries === null) continue;
    for (const [key, spend] of Object.entries(entries)) {
      if (typeof spend !== 'object' || spend === null) continue;
      const s = spend as Record<string, unknown>;
      const path = `$.state.${breakdown}.${JSON.stringify(key)}`;
      const found = room(s.input_tokens, s.output_tokens, {
        input: `${path}.input_tokens`,
        output: `${path}.output_tokens`,
      });
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * The deadlines that have passed at `now`, as the events that record them firing. The scheduler
 * appends each with `expectedIndex`, so a deadline that raced with a resolution is dropped.
 */
export function dueDeadlines(state: ThreadState, now: string): DeadlineFiredEvent[] {
  const due: DeadlineFiredEvent[] = [];
  for (const runId of state.runOrder) {
    const run = state.runs.get(runId)!;
    const deadline = getExpiredDeadline(run, now);
    if (deadline === undefined) continue;
    const deadlines = getRunDeadlines(run);
    const dueAt =
      deadline === 'approval' ? deadlines.approvalTimeoutAt! : deadlines.executionDeadlineAt!;
    due.push({ type: 'deadline_fired', runId, deadline, dueAt });
  }
  return due;
}
