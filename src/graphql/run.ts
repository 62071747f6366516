/** Runs: the type (a view of the core's WorkflowState), run queries and run mutations. */
import { z } from 'zod';
import type { JsonObject } from '../core/json.js';
import { getInjectedFactIds, type Spend } from '../core/run/index.js';
import type { RunResult } from '../engine/index.js';
import type { RunView } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { ActionTypeEnum, RunStatusEnum } from './enums.js';
import { notFound, unwrapResult } from './error-classes.js';
import { RUN_ERRORS } from './errors.js';
import { answerFromCommit, compact, idempotencyKeyField } from './inputs.js';
import { CausalNodeRef, RunRef, SpendRef, ThreadRef } from './refs.js';
import { RunConnection, RunFilter, RunOrder, runPage } from './run-list.js';
import { loadThread, pageSizeHint } from './thread.js';

async function loadRun(ctx: GraphQLContext, threadId: string, id: string): Promise<RunView> {
  const run = await ctx.loaders.run.load({ threadId, id });
  if (run === undefined) throw notFound('Run', id);
  return run;
}

const toSpend = (s: Spend) => ({
  inputTokens: s.input_tokens,
  outputTokens: s.output_tokens,
  costUsd: s.cost_usd,
  calls: s.calls,
});

const KeyedSpendRef = builder.objectRef<{ key: string; spend: Spend }>('KeyedSpend').implement({
  description: 'Spend of one model or one node.',
  fields: (t) => ({
    key: t.exposeString('key'),
    spend: t.field({ type: SpendRef, resolve: (k) => toSpend(k.spend) }),
  }),
});

const RunBudgetRef = builder.objectRef<RunView['state']>('RunBudget').implement({
  description: 'The run budgets; USD thresholds (50/75/90/100%) fire once each.',
  fields: (t) => ({
    maxTokenBudget: t.int({ nullable: true, resolve: (s) => s.max_token_budget ?? null }),
    budgetUsd: t.float({ nullable: true, resolve: (s) => s.budget_usd ?? null }),
    thresholdsFired: t.floatList({ resolve: (s) => s.budget_thresholds_fired }),
  }),
});

const keyed = (breakdown: Record<string, Spend>) =>
  Object.keys(breakdown)
    .sort()
    .map((key) => ({ key, spend: breakdown[key]! }));

const date = (iso: string | undefined) => (iso === undefined ? null : new Date(iso));

RunRef.implement({
  description: 'A workflow run inside a thread: its lifecycle, memory, spend and budget.',
  fields: (t) => ({
    id: t.exposeID('id'),
    threadId: t.exposeID('threadId'),
    thread: t.field({ type: ThreadRef, resolve: (r, _a, ctx) => loadThread(ctx, r.threadId) }),
    goal: t.string({ resolve: (r) => r.state.goal }),
    constraints: t.stringList({ resolve: (r) => r.state.constraints }),
    status: t.field({ type: RunStatusEnum, resolve: (r) => r.state.status }),
    currentNode: t.string({ nullable: true, resolve: (r) => r.state.current_node ?? null }),
    visitedNodes: t.stringList({ resolve: (r) => r.state.visited_nodes }),
    iterationCount: t.int({ resolve: (r) => r.state.iteration_count }),
    maxIterations: t.int({ resolve: (r) => r.state.max_iterations }),
    retryCount: t.int({ resolve: (r) => r.state.retry_count }),
    maxRetries: t.int({ resolve: (r) => r.state.max_retries }),
    lastError: t.string({ nullable: true, resolve: (r) => r.state.last_error ?? null }),
    waitingFor: t.string({ nullable: true, resolve: (r) => r.state.waiting_for ?? null }),
    waitingSince: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (r) => date(r.state.waiting_since),
    }),
    waitingTimeoutAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (r) => date(r.state.waiting_timeout_at),
    }),
    pendingApproval: t.field({
      type: 'JSON',
      nullable: true,
      resolve: (r) => r.state.pending_approval ?? null,
    }),
    memory: t.field({ type: 'JSON', resolve: (r) => r.state.memory }),
    taint: t.field({
      type: 'JSON',
      description: 'The taint registry: memory key → where its untrusted data came from.',
      resolve: (r) => r.state.taint_registry,
    }),
    lessonProvenance: t.field({ type: 'JSON', resolve: (r) => r.state.lesson_provenance }),
    injectedFactIds: t.stringList({ resolve: (r) => getInjectedFactIds(r.state) }),
    compensationStack: t.field({ type: 'JSON', resolve: (r) => r.state.compensation_stack }),
    supervisorHistory: t.field({ type: 'JSON', resolve: (r) => r.state.supervisor_history }),
    spend: t.field({
      type: SpendRef,
      resolve: (r) => ({
        inputTokens: r.state.total_input_tokens,
        outputTokens: r.state.total_output_tokens,
        costUsd: r.state.total_cost_usd,
        calls: Object.values(r.state.model_breakdown).reduce((n, s) => n + s.calls, 0),
      }),
    }),
    budget: t.field({ type: RunBudgetRef, resolve: (r) => r.state }),
    modelBreakdown: t.field({
      type: [KeyedSpendRef],
      resolve: (r) => keyed(r.state.model_breakdown),
    }),
    nodeBreakdown: t.field({
      type: [KeyedSpendRef],
      resolve: (r) => keyed(r.state.node_breakdown),
    }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => r.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (r) => r.updatedAt }),
    startedAt: t.field({ type: 'DateTime', nullable: true, resolve: (r) => r.startedAt }),
    logIndex: t.int({
      description: 'Index of the last log entry that changed the run.',
      resolve: (r) => r.logIndex,
    }),
    workflowState: t.field({
      type: 'JSON',
      description: 'The full workflow state of the run as the core keeps it (snake_case keys).',
      resolve: (r) => r.state,
    }),
  }),
});

builder.queryFields((t) => ({
  run: t.field({
    type: RunRef,
    nullable: true,
    description:
      'A run by id: in the thread that started it, or in `threadId` (a fork holds a copy under the same id). NOT_FOUND when there is none.',
    args: { id: t.arg.id({ required: true }), threadId: t.arg.id() },
    resolve: async (_r, { id, threadId }, ctx) => {
      const run = unwrapResult(await ctx.reads.findRun(id, threadId ?? undefined));
      if (run === undefined) throw notFound('Run', id);
      return run;
    },
  }),
  runs: t.field({
    type: RunConnection,
    description:
      'Runs, oldest first unless `orderBy` says otherwise. Page forward with `first`/`after`, backward with `last`/`before`.',
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      filter: t.arg({ type: RunFilter }),
      orderBy: t.arg({ type: RunOrder }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: (_r, args, ctx) =>
      runPage(ctx, args, {
        threadId: args.filter?.threadId ?? undefined,
        statuses: args.filter?.status ?? undefined,
        waitingFor: args.filter?.waitingFor ?? undefined,
        createdAfter: args.filter?.createdAfter ?? undefined,
        createdBefore: args.filter?.createdBefore ?? undefined,
        updatedAfter: args.filter?.updatedAfter ?? undefined,
        updatedBefore: args.filter?.updatedBefore ?? undefined,
      }),
  }),
}));

builder.objectField(ThreadRef, 'runs', (t) =>
  t.field({
    type: RunConnection,
    description: 'Runs of the thread, oldest first unless `orderBy` says otherwise.',
    args: {
      status: t.arg({ type: [RunStatusEnum] }),
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      orderBy: t.arg({ type: RunOrder }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: (th, args, ctx) =>
      runPage(ctx, args, { threadId: th.id, statuses: args.status ?? undefined }),
  }),
);

builder.objectField(ThreadRef, 'runsAt', (t) =>
  t.field({
    type: [RunRef],
    description:
      'Time travel: the runs of the thread as of its first `atIndex` log entries (as `state(atIndex:)` shows the graph), in the order they were started, each as it was then (`logIndex`: the last entry before `atIndex` that changed it). Replays those entries.',
    args: { atIndex: t.arg.int({ required: true }) },
    resolve: async (th, { atIndex }, ctx) => unwrapResult(await ctx.reads.runsAt(th.id, atIndex)),
  }),
);

builder.objectField(CausalNodeRef, 'run', (t) =>
  t.field({
    type: RunRef,
    nullable: true,
    description: 'The run that wrote the node.',
    resolve: async (n, _a, ctx) =>
      n.runId === null
        ? null
        : ((await ctx.loaders.run.load({ threadId: n.threadId, id: n.runId })) ?? null),
  }),
);

// Mutations ---------------------------------------------------------------------------------

const jsonObject = z.custom<JsonObject>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { message: 'must be a JSON object' },
);
const count = z.number().int().min(0);

const StartRunInput = builder.inputType('StartRunInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    goal: t.string({ required: true }),
    runId: t.id({ description: 'Choose the id (default: a generated one); must be new.' }),
    workflowId: t.string(),
    constraints: t.stringList(),
    maxTokenBudget: t.int({ validate: count }),
    budgetUsd: t.float({ validate: z.number().positive() }),
    maxIterations: t.int({ validate: z.number().int().positive() }),
    maxRetries: t.int({ validate: count }),
    maxExecutionTimeMs: t.int({ validate: z.number().int().positive() }),
    memory: t.field({ type: 'JSON', validate: jsonObject }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const ActionInput = builder.inputType('ActionInput', {
  fields: (t) => ({
    type: t.field({ type: ActionTypeEnum, required: true }),
    payload: t.field({ type: 'JSON', required: true }),
    compensation: t.field({ type: 'JSON' }),
    metadata: t.field({ type: 'JSON' }),
    id: t.id({ description: 'Action id (default: a generated one).' }),
  }),
});

const DispatchInput = builder.inputType('DispatchInput', {
  fields: (t) => ({
    runId: t.id({ required: true }),
    threadId: t.id({ description: 'Which copy of a forked run (default: the original).' }),
    expectedIndex: t.int({ validate: count }),
    action: t.field({ type: ActionInput, required: true }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const ResolveApprovalInput = builder.inputType('ResolveApprovalInput', {
  fields: (t) => ({
    runId: t.id({ required: true }),
    threadId: t.id(),
    decision: t.string({ required: true, description: 'e.g. approved, rejected.' }),
    response: t.field({ type: 'JSON' }),
    memoryUpdates: t.field({ type: 'JSON', validate: jsonObject }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const CancelRunInput = builder.inputType('CancelRunInput', {
  fields: (t) => ({
    runId: t.id({ required: true }),
    threadId: t.id(),
    reason: t.string(),
    rollback: t.boolean({ description: 'Drain the compensation stack (saga rollback).' }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const RecordUsageInput = builder.inputType('RecordUsageInput', {
  fields: (t) => ({
    runId: t.id({ required: true }),
    threadId: t.id(),
    nodeId: t.string(),
    model: t.string({ required: true }),
    inputTokens: t.int({ required: true, validate: count }),
    outputTokens: t.int({ required: true, validate: count }),
    costUsd: t.float({ validate: z.number().min(0) }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const ImportWorkflowStateInput = builder.inputType('ImportWorkflowStateInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    state: t.field({ type: 'JSON', required: true, description: 'A WorkflowState (v1 or v2).' }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const RunSuccess = (name: string) =>
  builder.objectRef<RunResult>(name).implement({
    fields: (t) => ({
      run: t.field({ type: RunRef, resolve: (s, _a, ctx) => loadRun(ctx, s.threadId, s.runId) }),
      logIndex: t.exposeInt('logIndex'),
    }),
  });

const StartRunSuccess = RunSuccess('StartRunSuccess');
const DispatchSuccess = RunSuccess('DispatchSuccess');
const ResolveApprovalSuccess = RunSuccess('ResolveApprovalSuccess');
const CancelRunSuccess = RunSuccess('CancelRunSuccess');
const RecordUsageSuccess = RunSuccess('RecordUsageSuccess');
const ImportWorkflowStateSuccess = RunSuccess('ImportWorkflowStateSuccess');

const errors = (union: string) => ({
  types: RUN_ERRORS,
  directResult: true as const,
  union: { name: union },
});

builder.mutationFields((t) => ({
  startRun: t.field({
    type: StartRunSuccess,
    args: { input: t.arg({ type: StartRunInput, required: true }) },
    errors: errors('StartRunResult'),
    resolve: async (_r, { input }, ctx) => {
      const { memory, ...rest } = input;
      const result = await ctx.engine.startRun({
        threadId: input.threadId,
        goal: input.goal,
        ...compact({ ...rest, threadId: undefined, goal: undefined }),
        ...(memory === null || memory === undefined ? {} : { memory: memory as JsonObject }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  dispatch: t.field({
    type: DispatchSuccess,
    args: { input: t.arg({ type: DispatchInput, required: true }) },
    errors: errors('DispatchResult'),
    resolve: async (_r, { input }, ctx) => {
      const a = input.action;
      const result = await ctx.engine.dispatch({
        runId: input.runId,
        action: {
          type: a.type,
          payload: a.payload ?? null,
          ...compact({ compensation: a.compensation, metadata: a.metadata, id: a.id }),
        },
        ...compact({
          threadId: input.threadId,
          expectedIndex: input.expectedIndex,
          idempotencyKey: input.idempotencyKey,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  resolveApproval: t.field({
    type: ResolveApprovalSuccess,
    // Approving is its own scope: a `write` key cannot decide for a human.
    authScopes: { approve: true },
    skipTypeScopes: true,
    args: { input: t.arg({ type: ResolveApprovalInput, required: true }) },
    errors: errors('ResolveApprovalResult'),
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.resolveApproval({
        runId: input.runId,
        decision: input.decision,
        ...compact({
          threadId: input.threadId,
          response: input.response,
          memoryUpdates: input.memoryUpdates as JsonObject | null | undefined,
          idempotencyKey: input.idempotencyKey,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  cancelRun: t.field({
    type: CancelRunSuccess,
    args: { input: t.arg({ type: CancelRunInput, required: true }) },
    errors: errors('CancelRunResult'),
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.cancelRun({
        runId: input.runId,
        ...compact({
          threadId: input.threadId,
          reason: input.reason,
          rollback: input.rollback,
          idempotencyKey: input.idempotencyKey,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  recordUsage: t.field({
    type: RecordUsageSuccess,
    args: { input: t.arg({ type: RecordUsageInput, required: true }) },
    errors: errors('RecordUsageResult'),
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.recordUsage({
        runId: input.runId,
        model: input.model,
        inputTokens: input.inputTokens,
        outputTokens: input.outputTokens,
        ...compact({
          threadId: input.threadId,
          nodeId: input.nodeId,
          costUsd: input.costUsd,
          idempotencyKey: input.idempotencyKey,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  importWorkflowState: t.field({
    type: ImportWorkflowStateSuccess,
    args: { input: t.arg({ type: ImportWorkflowStateInput, required: true }) },
    errors: errors('ImportWorkflowStateResult'),
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.importWorkflowState({
        threadId: input.threadId,
        state: input.state,
        ...compact({ idempotencyKey: input.idempotencyKey }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
}));
