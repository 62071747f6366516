/**
 * The handlers that change runs: each action goes through the run reducer, whose events become
 * effects and part of the state-hash delta; usage is charged to the run and the thread.
 */
import { err, ok, type Result } from '../errors.js';
// Internal to the core (not re-exported): the parse of a recorded action, for replay.
import { parseRecordedRunAction } from '../run/actions.js';
import {
  type AnyRunAction,
  hydrateWorkflowState,
  type InternalRunAction,
  isTerminalStatus,
  type RunEvent,
  reduceRun,
  type WorkflowState,
} from '../run/index.js';
// Internal to the core (not re-exported): reduceRun without a second parse of the action.
import { reduceParsedRun } from '../run/reducer.js';
import {
  type ApplyContext,
  attempt,
  invalid,
  runNotFound,
  type ThreadEffect,
  touch,
} from './apply-context.js';
import { RunMap } from './run-map.js';
import { copyThreadState, type ThreadSpend, type ThreadState } from './state.js';

export function applyRunAction(
  state: ThreadState,
  runId: string,
  rawAction: unknown,
  ctx: ApplyContext,
): Result<ThreadState> {
  const run = state.runs.get(runId);
  if (!run) return err(runNotFound(runId));
  const action = parseRecordedRunAction(rawAction);
  if (!action.ok) return action;
  return reduceInto(state, runId, run, action.value, ctx, true);
}

/**
 * Applies an internal action that apply built itself from checked event fields: it is typed by
 * construction, so the schema parse that recorded public actions go through is skipped.
 */
export function applyInternal(
  state: ThreadState,
  runId: string,
  action: InternalRunAction,
  ctx: ApplyContext,
): Result<ThreadState> {
  const run = state.runs.get(runId);
  if (!run) return err(runNotFound(runId));
  return reduceInto(state, runId, run, action, ctx);
}

function reduceInto(
  state: ThreadState,
  runId: string,
  run: WorkflowState,
  action: AnyRunAction,
  ctx: ApplyContext,
  parsed = false,
): Result<ThreadState> {
  // A recorded public action was parsed by applyRunAction; internal ones are built here from
  // checked event fields and still go through the reducer's own validation.
  const reduced = parsed
    ? reduceParsedRun(run, action, runContext(ctx))
    : reduceRun(run, action, runContext(ctx));
  if (!reduced.ok) return reduced;
  touch(ctx, runId);
  ctx.runEvents ??= new Map();
  const recorded = ctx.runEvents.get(runId);
  if (recorded) recorded.push(...reduced.value.events);
  else ctx.runEvents.set(runId, [...reduced.value.events]);
  if (ctx.effects)
    for (const event of reduced.value.events) ctx.effects.push(runEffect(runId, event));
  const next = copyThreadState(state);
  next.runs = setRun(state.runs, runId, reduced.value.state);
  return ok(next);
}

/** `runs` with one run set: a new persistent map (see run-map.ts); `runs` is left as it was. */
export const setRun = (
  runs: ReadonlyMap<string, WorkflowState>,
  runId: string,
  run: WorkflowState,
): ReadonlyMap<string, WorkflowState> => RunMap.from(runs).set(runId, run);

function runContext(ctx: ApplyContext) {
  return {
    now: ctx.entry.recordedAt,
    ...(ctx.options.prices ? { prices: ctx.options.prices } : {}),
    ...(ctx.options.memoryLimits ? { limits: ctx.options.memoryLimits } : {}),
  };
}

function runEffect(runId: string, event: RunEvent): ThreadEffect {
  if (event.type === 'status_changed') {
    return { type: 'run_status_changed', runId, from: event.from, to: event.to };
  }
  if (event.type === 'approval_requested') {
    return {
      type: 'approval_requested',
      runId,
      waitingFor: event.waiting_for,
      pendingApproval: event.pending_approval,
      timeoutAt: event.timeout_at,
    };
  }
  return { type: 'run_event', runId, event };
}

export function chargeUsage(
  state: ThreadState,
  runId: string | undefined,
  nodeId: string | undefined,
  usage: { model: string; inputTokens: number; outputTokens: number; costUsd?: number },
  ctx: ApplyContext,
): Result<ThreadState> {
  let next = state;
  let costUsd = usage.costUsd ?? 0;
  if (runId !== undefined) {
    const run = state.runs.get(runId);
    if (!run) return err(runNotFound(runId));
    const before = run.total_cost_usd;
    const action: InternalRunAction = {
      id: ctx.entry.id,
      type: '_track_usage',
      payload: {
        model: usage.model,
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        ...(nodeId === undefined ? {} : { node_id: nodeId }),
        ...(usage.costUsd === undefined ? {} : { cost_usd: usage.costUsd }),
      },
    };
    const reduced = reduceInto(state, runId, run, action, ctx);
    if (!reduced.ok) return reduced;
    next = reduced.value;
    // The run's price table may have costed the call; the thread total follows the run.
    costUsd = next.runs.get(runId)!.total_cost_usd - before;
  }
  const spend: ThreadSpend = {
    inputTokens: next.spend.inputTokens + usage.inputTokens,
    outputTokens: next.spend.outputTokens + usage.outputTokens,
    costUsd: next.spend.costUsd + costUsd,
    calls: next.spend.calls + 1,
  };
  const charged = copyThreadState(next);
  charged.spend = spend;
  return ok(charged);
}

export function applyDeadline(
  state: ThreadState,
  runId: string,
  deadline: 'approval' | 'execution',
  dueAt: string,
  ctx: ApplyContext,
): Result<ThreadState> {
  const run = state.runs.get(runId);
  if (!run) return err(runNotFound(runId));
  const stillDue =
    deadline === 'approval'
      ? run.status === 'waiting' && run.waiting_timeout_at === dueAt
      : !isTerminalStatus(run.status);
  if (!stillDue) {
    return err({
      code: 'INVALID_ACTION',
      message: `the ${deadline} deadline ${dueAt} of run ${runId} no longer applies`,
      runId,
    });
  }
  if (Date.parse(ctx.entry.recordedAt) < Date.parse(dueAt)) {
    return err({
      code: 'INVALID_ACTION',
      message: `the ${deadline} deadline of run ${runId} is due at ${dueAt}, not yet at ${ctx.entry.recordedAt}`,
      runId,
    });
  }
  return applyInternal(
    state,
    runId,
    {
      id: ctx.entry.id,
      type: '_timeout',
      payload: { kind: deadline, reason: `${deadline} deadline ${dueAt} passed` },
    },
    ctx,
  );
}

export function applyWorkflowImport(
  state: ThreadState,
  runId: string,
  raw: unknown,
  ctx: ApplyContext,
): Result<ThreadState> {
  if (state.runs.has(runId)) return err(invalid(`run ${runId} already exists in this thread`));
  const result = attempt(() => hydrateWorkflowState(raw));
  if (!result.ok) return result;
  const hydrated = result.value;
  if (hydrated.run_id !== runId) {
    return err(invalid(`imported state has run_id ${hydrated.run_id}, the entry says ${runId}`));
  }
  touch(ctx, runId);
  ctx.effects?.push({ type: 'run_started', runId });
  const next = copyThreadState(state);
  next.runs = setRun(state.runs, runId, hydrated);
  next.runOrder = [...state.runOrder, runId];
  return ok(next);
}
