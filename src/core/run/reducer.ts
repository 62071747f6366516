import { err, isWeftFailure, ok, type Result } from '../errors.js';
import type { JsonValue } from '../json.js';
import {
  type InternalRunAction,
  isInternalRunAction,
  parseAnyRunAction,
  type RunAction,
} from './actions.js';
import { applyUsage } from './budget.js';
import type { RunEvent } from './events.js';
import { reduceInternal } from './internal.js';
import { addMs, assertCanTransition, transitionTo } from './lifecycle.js';
import { appendBounded, mergeLessonRegistry, mergeMemory } from './memory.js';
import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  IsoDateTimeSchema,
  MAX_SUPERVISOR_HISTORY,
  type WorkflowState,
} from './schema.js';
import { isTerminalStatus } from './status.js';
import {
  chain,
  countIteration,
  enterNode,
  invalidAction,
  pushCompensation,
  type RunContext,
  type RunReduction,
  type Step,
  unchanged,
} from './steps.js';

export type { RunContext, RunReduction } from './steps.js';

/**
 * Applies one action to a run: `(state, action) → {state, events}`. Pure and deterministic — it
 * never mutates its inputs, never reads a clock, and the same state, action and context always
 * give deep-equal output. Effects (compensations to run, approvals to announce) come back as
 * events; the caller executes them.
 *
 * Public actions:
 * - validate first (VALIDATION_FAILED), then refuse what the run's status forbids: status-moving
 *   actions with INVALID_TRANSITION {from, to} (the guard of `canTransitionStatus`, nothing
 *   stricter), other actions on a terminal run with INVALID_ACTION. Errors change nothing.
 * - each accepted dispatch increments `iteration_count`; the dispatch that takes it above
 *   `max_iterations` fails the run (the call succeeds, the action is not applied, an
 *   `iteration_limit_exceeded` event is emitted).
 * - an action carrying `compensation` pushes `{action_id, compensation_action}`.
 * - `metadata.token_usage` is charged like `_track_usage` (model = `metadata.model` or
 *   'unknown', node = `metadata.node_id`), after the action's own effect.
 *
 * Internal (`_`) actions count no iteration (except `_increment_iteration`). Lifecycle ones are
 * guarded like set_status; `_track_usage`, `_record_lessons`, `_taint` and `_pop_compensation`
 * are accepted in every status (usage is a fact, the registries are append-only, rollback runs
 * on terminal runs); `_advance`, `_push_compensation` and `_increment_iteration` need an active
 * run (INVALID_ACTION otherwise).
 *
 * Idempotency keys are not deduplicated here: the engine does that before calling (invariant 10).
 */
export function reduceRun(
  state: WorkflowState,
  action: RunAction | InternalRunAction,
  ctx: RunContext,
): Result<RunReduction> {
  if (!IsoDateTimeSchema.safeParse(ctx.now).success) {
    const message = `RunContext.now must be an ISO 8601 timestamp (got ${JSON.stringify(ctx.now)}).`;
    return err({ code: 'VALIDATION_FAILED', message, issues: [{ path: '$.now', message }] });
  }
  const parsed = parseAnyRunAction(action);
  if (!parsed.ok) return parsed;
  return reduceParsedRun(state, parsed.value, ctx);
}

/**
 * `reduceRun` for an action that already went through `parseAnyRunAction` (its output, not the
 * raw input): the same reduction without validating the action a second time. `ctx.now` is
 * still checked. Pure.
 */
export function reduceParsedRun(
  state: WorkflowState,
  action: RunAction | InternalRunAction,
  ctx: RunContext,
): Result<RunReduction> {
  if (!IsoDateTimeSchema.safeParse(ctx.now).success) {
    const message = `RunContext.now must be an ISO 8601 timestamp (got ${JSON.stringify(ctx.now)}).`;
    return err({ code: 'VALIDATION_FAILED', message, issues: [{ path: '$.now', message }] });
  }
  try {
    const step = isInternalRunAction(action)
      ? reduceInternal(state, action, ctx)
      : reducePublic(state, action, ctx);
    return ok({ state: { ...step.state, updated_at: ctx.now }, events: step.events });
  } catch (caught) {
    if (isWeftFailure(caught)) return err(caught.error);
    throw caught;
  }
}

// ─── Public actions ─────────────────────────────────────────────────

function reducePublic(state: WorkflowState, action: RunAction, ctx: RunContext): Step {
  assertPublicAllowed(state, action);

  const counted = countIteration(state, ctx.now);
  if (counted.exceeded) return chain(counted, (s) => chargeActionUsage(s, action, ctx));

  return chain(
    counted,
    (s) => applyPublic(s, action, ctx),
    (s) => pushActionCompensation(s, action),
    (s) => chargeActionUsage(s, action, ctx),
  );
}

/** Throws the error an action gets in the run's current status, before anything changes. */
function assertPublicAllowed(state: WorkflowState, action: RunAction): void {
  const { status } = state;
  switch (action.type) {
    case 'set_status':
      assertCanTransition(state, action.payload.status); // throws when illegal
      return;
    case 'request_human_input':
      assertCanTransition(state, 'waiting');
      if (status === 'waiting') {
        invalidAction(
          state,
          `Run ${state.run_id} is already waiting for ${state.waiting_for ?? 'input'}; resume it before requesting input again.`,
        );
      }
      return;
    case 'resume_from_human':
      assertCanTransition(state, 'running');
      if (status !== 'waiting') {
        invalidAction(
          state,
          `Run ${state.run_id} is ${status}, not waiting for human input; there is nothing to resume.`,
        );
      }
      return;
    default:
      if (isTerminalStatus(status)) {
        invalidAction(
          state,
          `Run ${state.run_id} is ${status}; a terminal run accepts no ${action.type} action. Start a new run instead.`,
        );
      }
  }
}

function applyPublic(state: WorkflowState, action: RunAction, ctx: RunContext): Step {
  const nodeId = action.metadata?.node_id;
  switch (action.type) {
    case 'update_memory':
    case 'merge_parallel_results': {
      const { updates, taint, taint_by_key, input_keys } = action.payload;
      return mergeMemory(state, updates, ctx, { node_id: nodeId, taint, taint_by_key, input_keys });
    }
    case 'set_status': {
      const { status, error, reason } = action.payload;
      return chain(
        transitionTo(state, status, ctx.now, {
          reason,
          last_error: status === 'failed' ? error : undefined,
        }),
        (s) => mergeLessonRegistry(s, action.payload.lesson_provenance),
      );
    }
    case 'goto_node':
      return enterNode(state, action.payload.node_id, 'goto_node');
    case 'handoff': {
      const { node_id, supervisor_id, reasoning, memory_updates, lesson_provenance } =
        action.payload;
      return chain(
        enterNode(state, node_id, 'handoff'),
        (s) =>
          unchanged({
            ...s,
            supervisor_history: appendBounded(
              s.supervisor_history,
              [
                {
                  supervisor_id,
                  delegated_to: node_id,
                  reasoning,
                  iteration: s.iteration_count,
                  timestamp: ctx.now,
                },
              ],
              MAX_SUPERVISOR_HISTORY,
            ),
          }),
        (s) => mergeMemory(s, memory_updates ?? {}, ctx, { node_id: nodeId }),
        (s) => mergeLessonRegistry(s, lesson_provenance),
      );
    }
    case 'request_human_input':
      return requestHumanInput(state, action, ctx);
    case 'resume_from_human': {
      const { decision, response, memory_updates } = action.payload;
      // The decision and response are written after memory_updates, so they always win.
      const updates: Record<string, JsonValue> = { ...memory_updates, human_decision: decision };
      if (response !== undefined) updates.human_response = response;
      return chain(
        transitionTo(state, 'running', ctx.now, { reason: 'approval_resolved' }),
        (s) => ({ state: s, events: [{ type: 'approval_resolved', decision }] }),
        (s) => mergeMemory(s, updates, ctx, { node_id: nodeId }),
      );
    }
  }
}

function requestHumanInput(
  state: WorkflowState,
  action: Extract<RunAction, { type: 'request_human_input' }>,
  ctx: RunContext,
): Step {
  const {
    waiting_for = 'human_approval',
    timeout_ms,
    pending_approval,
    memory_updates,
  } = action.payload;
  const timeoutAt = addMs(ctx.now, timeout_ms ?? DEFAULT_APPROVAL_TIMEOUT_MS);
  return chain(
    mergeMemory(state, memory_updates ?? {}, ctx, { node_id: action.metadata?.node_id }),
    (s) => transitionTo(s, 'waiting', ctx.now, { reason: waiting_for }),
    (s) => {
      const next: WorkflowState = {
        ...s,
        waiting_for,
        waiting_since: ctx.now,
        waiting_timeout_at: timeoutAt,
      };
      if (pending_approval !== undefined) next.pending_approval = pending_approval;
      const event: RunEvent = { type: 'approval_requested', waiting_for, timeout_at: timeoutAt };
      if (pending_approval !== undefined) event.pending_approval = pending_approval;
      return { state: next, events: [event] };
    },
  );
}

function pushActionCompensation(state: WorkflowState, action: RunAction): Step {
  if (action.compensation === undefined) return unchanged(state);
  return pushCompensation(state, {
    action_id: action.id,
    compensation_action: action.compensation,
  });
}

function chargeActionUsage(state: WorkflowState, action: RunAction, ctx: RunContext): Step {
  const usage = action.metadata?.token_usage;
  if (usage === undefined) return unchanged(state);
  return applyUsage(
    state,
    {
      model: action.metadata?.model ?? 'unknown',
      node_id: action.metadata?.node_id,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cost_usd: usage.cost_usd,
    },
    ctx,
  );
}
