import { err, ok, type Result } from '../errors.js';
import { createGraph, importAgentState } from '../graph/index.js';
import { chainStateHashText, type LogEntry, type LogMachine } from '../log/index.js';
import { createWorkflowState, type WorkflowStateConfig } from '../run/index.js';
import {
  type ApplyContext,
  addCreated,
  attempt,
  invalid,
  type ThreadEffect,
  type ThreadMachineOptions,
} from './apply-context.js';
import { appendRecorded } from './apply-nodes.js';
import {
  applyDeadline,
  applyInternal,
  applyRunAction,
  applyWorkflowImport,
  chargeUsage,
  setRun,
} from './apply-runs.js';
import { checkEventShape } from './event-shape.js';
import type { RecordedNode, ThreadEvent } from './events.js';
import { applyRedaction } from './redaction.js';
import { copyThreadState, createEmptyThreadState, type ThreadState } from './state.js';
import { runDeltasText, unsignedEntryText } from './state-delta.js';
import { vecPush } from './vec.js';

export type { ThreadEffect, ThreadMachineOptions } from './apply-context.js';
export { getNodeMeta } from './apply-nodes.js';

type Applied = Result<[ThreadState, ThreadEffect[]]>;

/**
 * The thread state machine: `apply(state, entry) → [next, effects]`. Pure and total over valid
 * entries; an entry that does not fit the state (a run that does not exist, an illegal
 * transition, a node whose recorded id differs from its content) is an error and changes
 * nothing. `stateHash` chains the previous hash with a canonical delta of what the entry did.
 */
export function createThreadMachine(
  options: ThreadMachineOptions = {},
): LogMachine<ThreadState, ThreadEffect> {
  const initialGraph = createGraph();
  if (!initialGraph.ok) throw new Error(initialGraph.error.message);
  return {
    initial: createEmptyThreadState(initialGraph.value),
    apply: (state, entry, text, effects) => applyThreadEntry(state, entry, options, text, effects),
    stateHash: (state) => state.stateHash,
  };
}

/**
 * Applies one entry (see createThreadMachine). `text`: the entry's stored canonical text, hashed
 * instead of re-serialising the entry. `effects: false` when the caller discards the effects (a
 * replay that does not collect them): none are built and the list returned is empty.
 */
export function applyThreadEntry(
  state: ThreadState,
  entry: LogEntry,
  options: ThreadMachineOptions = {},
  text?: string,
  effects = true,
): Applied {
  if (entry.index !== state.length) {
    return err(invalid(`entry index ${entry.index} does not follow log length ${state.length}`));
  }
  const issues = checkEventShape(entry.event);
  if (issues.length > 0) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `entry ${entry.index} is malformed: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      issues: [...issues],
    });
  }
  const event = entry.event as unknown as ThreadEvent;
  const ctx: ApplyContext = {
    entry,
    options,
    effects: effects ? [] : undefined,
    created: '',
    touchedRuns: [],
    runEvents: undefined,
  };
  const result = dispatchEvent(state, event, ctx);
  if (!result.ok) return result;
  // chainStateHash(previous, {created, entry, runs}) written out, the entry rendered directly.
  const delta = `{"created":[${ctx.created}],"entry":${unsignedEntryText(entry, text)},"runs":${runDeltasText(result.value, ctx.touchedRuns, ctx)}}`;
  const recordedHash = entry.verification?.stateHash;
  const stateHash =
    ctx.withheld === true && recordedHash !== undefined
      ? recordedHash
      : chainStateHashText(state.stateHash, delta);
  // Every dispatch path that changes something returns a fresh object no one else has seen yet,
  // so it is finished in place; only an unchanged `state` must be copied.
  const next = result.value === state ? copyThreadState(state) : result.value;
  next.length = state.length + 1;
  next.stateHash = stateHash;
  return ok([next, ctx.effects ?? []]);
}

function dispatchEvent(
  state: ThreadState,
  event: ThreadEvent,
  ctx: ApplyContext,
): Result<ThreadState> {
  if (state.config === null && event.type !== 'thread_created' && event.type !== 'state_imported') {
    return err(
      invalid(`the first entry must be thread_created or state_imported, not ${event.type}`),
    );
  }
  switch (event.type) {
    case 'thread_created':
    case 'state_imported':
      return applyCreation(state, event, ctx);
    case 'thread_forked': {
      const next = copyThreadState(state);
      next.config = {
        ...state.config!,
        threadId: event.threadId,
        forkedFrom: { threadId: event.fromThreadId, upToIndex: event.upToIndex },
      };
      return ok(next);
    }
    case 'nodes_appended':
      return appendRecorded(state, event.nodes, ctx, '$.event.nodes');
    case 'run_started':
      return applyRunStarted(state, event.runId, event.config, event.goalNode, ctx);
    case 'run_action_dispatched': {
      const reduced = applyRunAction(state, event.runId, event.action, ctx);
      return reduced.ok
        ? appendRecorded(reduced.value, event.memoryNodes, ctx, '$.event.memoryNodes')
        : reduced;
    }
    case 'approval_resolved': {
      const reduced = applyRunAction(state, event.runId, event.action, ctx);
      return reduced.ok
        ? appendRecorded(reduced.value, event.memoryNodes ?? [], ctx, '$.event.memoryNodes')
        : reduced;
    }
    case 'run_cancelled':
      return applyInternal(
        state,
        event.runId,
        {
          id: ctx.entry.id,
          type: '_cancel',
          payload: { reason: event.reason, rollback: event.rollback },
        },
        ctx,
      );
    case 'usage_recorded': {
      const usage = {
        model: event.model,
        inputTokens: event.inputTokens,
        outputTokens: event.outputTokens,
        ...(event.costUsd === undefined ? {} : { costUsd: event.costUsd }),
      };
      return chargeUsage(state, event.runId, event.nodeId, usage, ctx);
    }
    case 'deadline_fired':
      return applyDeadline(state, event.runId, event.deadline, event.dueAt, ctx);
    case 'workflow_state_imported':
      return applyWorkflowImport(state, event.runId, event.state, ctx);
    case 'checkpoint_saved':
    case 'checkpoint_writes_saved':
      return appendRecorded(state, event.nodes, ctx, '$.event.nodes');
    case 'checkpoints_cleared':
      return ok(state);
    case 'nodes_redacted':
      return applyRedaction(state, event, ctx);
    default: {
      const unknownType = (event as { type?: unknown }).type;
      return err(invalid(`unknown thread event type ${JSON.stringify(unknownType)}`));
    }
  }
}

function applyCreation(
  state: ThreadState,
  event: Extract<ThreadEvent, { type: 'thread_created' | 'state_imported' }>,
  ctx: ApplyContext,
): Result<ThreadState> {
  if (state.config !== null || state.length !== 0) {
    return err(invalid(`${event.type} must be the first entry of a thread`));
  }
  const config = { nodeTypes: event.nodeTypes, allowDynamicNodeTypes: event.allowDynamicNodeTypes };
  const prepared = ctx.options.importedGraph;
  const graph =
    event.type !== 'state_imported'
      ? createGraph(config)
      : prepared?.state === event.state
        ? ok(prepared.graph)
        : importAgentState(event.state, config, ctx.options.importLimits);
  if (!graph.ok) return graph;
  let nodeMeta = state.nodeMeta;
  let latestSystemNodeId: string | undefined;
  if (event.type === 'state_imported') {
    for (const node of event.state.nodes) {
      if (node.kind === 'system') latestSystemNodeId = node.id;
      nodeMeta = vecPush(nodeMeta, { logIndex: ctx.entry.index });
      addCreated(ctx, node.id);
      ctx.effects?.push({ type: 'node_appended', node, meta: { logIndex: ctx.entry.index } });
    }
  }
  ctx.effects?.unshift({ type: 'thread_created', threadId: event.threadId });
  const next = copyThreadState(state, latestSystemNodeId ?? state.latestSystemNodeId);
  next.graph = graph.value;
  next.nodeMeta = nodeMeta;
  next.config = {
    threadId: event.threadId,
    createdAt: ctx.entry.recordedAt,
    metadata: event.metadata,
    nodeTypes: graph.value.config.nodeTypes,
    allowDynamicNodeTypes: graph.value.config.allowDynamicNodeTypes,
  };
  return ok(next);
}

function applyRunStarted(
  state: ThreadState,
  runId: string,
  config: unknown,
  goalNode: RecordedNode,
  ctx: ApplyContext,
): Result<ThreadState> {
  if (state.runs.has(runId)) return err(invalid(`run ${runId} already exists`));
  const created = attempt(() =>
    createWorkflowState(config as WorkflowStateConfig, {
      runId,
      now: ctx.entry.recordedAt,
      ...(ctx.options.memoryLimits ? { limits: ctx.options.memoryLimits } : {}),
    }),
  );
  if (!created.ok) return created;
  const withRun = copyThreadState(state);
  withRun.runs = setRun(state.runs, runId, created.value);
  withRun.runOrder = [...state.runOrder, runId];
  ctx.effects?.push({ type: 'run_started', runId });
  const started = applyInternal(
    withRun,
    runId,
    { id: ctx.entry.id, type: '_init', payload: {} },
    ctx,
  );
  if (!started.ok) return started;
  return appendRecorded(started.value, [{ ...goalNode, runId }], ctx, '$.event.goalNode');
}
