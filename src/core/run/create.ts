import { z } from 'zod';
import { WeftFailure } from '../errors.js';
import { findJsonUnsafe } from '../log/json-safety.js';
import { type MemoryLimits, mergeMemory } from './memory.js';
import {
  CURRENT_STATE_SCHEMA_VERSION,
  DEFAULT_MAX_EXECUTION_TIME_MS,
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_RETRIES,
  IsoDateTimeSchema,
  JsonObjectSchema,
  plainNumber,
  toValidationIssues,
  type WorkflowState,
  WorkflowStateSchema,
} from './schema.js';

/** The authoring input of a run (camelCase, as the GraphQL StartRunInput). */
export const WorkflowStateConfigSchema = z.strictObject({
  workflowId: z.string().min(1),
  goal: z.string(),
  constraints: z.array(z.string()).optional(),
  maxExecutionTimeMs: plainNumber().int().positive().optional(),
  maxTokenBudget: plainNumber().int().nonnegative().optional(),
  budgetUsd: plainNumber().positive().optional(),
  maxIterations: plainNumber().int().positive().optional(),
  maxRetries: plainNumber().int().nonnegative().optional(),
  memory: JsonObjectSchema.optional(),
});
export type WorkflowStateConfig = z.input<typeof WorkflowStateConfigSchema>;

export interface CreateRunContext {
  /** Supplied by the caller (an IdSource); the core mints no ids. */
  runId: string;
  /** ISO time of creation; becomes created_at and updated_at. */
  now: string;
  limits?: MemoryLimits;
}

/**
 * A fresh `pending` run with the WorkflowState defaults. The seed memory goes through `mergeMemory`, so
 * reserved `_` keys and oversized values are dropped and recorded in `memory_drops` exactly as
 * for any later write. Pure; throws a WeftFailure VALIDATION_FAILED for invalid input.
 */
export function createWorkflowState(
  config: WorkflowStateConfig,
  ctx: CreateRunContext,
): WorkflowState {
  // The recursive schema would overflow the stack on a cycle. Nesting depth is bounded where a
  // caller's config comes in (planStartRun), not here: replay rebuilds recorded runs through
  // this function and must read every log it once accepted.
  const unsafe = findJsonUnsafe(config);
  if (unsafe !== null) {
    throw validationFailure('Invalid run configuration', [
      { path: unsafe.path, message: unsafe.reason },
    ]);
  }
  const parsed = WorkflowStateConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw validationFailure('Invalid run configuration', toValidationIssues(parsed.error));
  }
  const ctxIssues = [
    ...(typeof ctx.runId === 'string' && ctx.runId.length > 0
      ? []
      : [{ path: '$.runId', message: 'runId must be a non-empty string' }]),
    ...(IsoDateTimeSchema.safeParse(ctx.now).success
      ? []
      : [{ path: '$.now', message: 'now must be an ISO 8601 timestamp' }]),
  ];
  if (ctxIssues.length > 0) throw validationFailure('Invalid run context', ctxIssues);

  const c = parsed.data;
  const base: WorkflowState = {
    state_schema_version: CURRENT_STATE_SCHEMA_VERSION,
    workflow_id: c.workflowId,
    run_id: ctx.runId,
    goal: c.goal,
    constraints: c.constraints ?? [],
    status: 'pending',
    iteration_count: 0,
    max_iterations: c.maxIterations ?? DEFAULT_MAX_ITERATIONS,
    max_execution_time_ms: c.maxExecutionTimeMs ?? DEFAULT_MAX_EXECUTION_TIME_MS,
    retry_count: 0,
    max_retries: c.maxRetries ?? DEFAULT_MAX_RETRIES,
    compensation_stack: [],
    total_tokens_used: 0,
    total_input_tokens: 0,
    total_output_tokens: 0,
    total_cost_usd: 0,
    budget_thresholds_fired: [],
    model_breakdown: {},
    node_breakdown: {},
    memory: {},
    memory_drops: [],
    visited_nodes: [],
    supervisor_history: [],
    created_at: ctx.now,
    updated_at: ctx.now,
    taint_registry: {},
    lesson_provenance: {},
    policy_approvals: {},
    subgraph_checkpoints: {},
    subgraph_stack: [],
    swarm_handoff_count: 0,
  };
  if (c.maxTokenBudget !== undefined) base.max_token_budget = c.maxTokenBudget;
  if (c.budgetUsd !== undefined) base.budget_usd = c.budgetUsd;

  const seeded = mergeMemory(base, c.memory ?? {}, { now: ctx.now, limits: ctx.limits }).state;
  return WorkflowStateSchema.parse(seeded);
}

function validationFailure(what: string, issues: { path: string; message: string }[]) {
  const first = issues[0];
  return new WeftFailure({
    code: 'VALIDATION_FAILED',
    message: `${what}${first ? `: ${first.path}: ${first.message}` : ''}.`,
    issues,
  });
}
