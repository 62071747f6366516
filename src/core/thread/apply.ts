import { err, ok, type Result } from '../errors.js';
import { CHUNK, createGraph, importAgentState, runSteps, type Steps } from '../graph/index.js';
import { sha256Parts } from '../hash.js';
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
  const started = startApply(state, entry, options, effects);
  if (!started.ok) return started;
  const ctx = started.value;
  const result = dispatchEvent(state, entry.event as unknown as ThreadEvent, ctx);
  if (!result.ok) return result;
  // chainStateHash(previous, {created, entry, runs}) written out, the entry rendered directly.
  const delta = `{"created":[${ctx.created}],"entry":${unsignedEntryText(entry, text)},"runs":${runDeltasText(result.value, ctx.touchedRuns, ctx)}}`;
  const recordedHash = entry.verification?.stateHash;
  const stateHash =
    ctx.withheld === true && recordedHash !== undefined
      ? recordedHash
      : chainStateHashText(state.stateHash, delta);
  return ok([finish(state, result.value, stateHash), ctx.effects ?? []]);
}

/**
 * `applyThreadEntry` in steps (see `Steps`) for the first entry of a thread, whose nodes may be
 * many (`state_imported`): the nodes are added, and the state hash computed, a chunk at a time.
 * `pieces` joined are the entry's canonical text less its signature. Same result as
 * `applyThreadEntry(state, entry, options, pieces.join(''))`. Pure.
 */
export function* applyCreationEntrySteps(
  state: ThreadState,
  entry: LogEntry,
  options: ThreadMachineOptions,
  pieces: readonly string[],
): Steps<Applied> {
  const started = startApply(state, entry, options, true);
  if (!started.ok) return started;
  const ctx = started.value;
  const event = entry.event as unknown as ThreadEvent;
  if (event.type !== 'thread_created' && event.type !== 'state_imported') {
    return err(invalid(`${event.type} is not the first entry of a thread`));
  }
  const result = yield* applyCreationSteps(state, event, ctx);
  if (!result.ok) return result;
  // As in applyThreadEntry, fed to the hash in parts: the ids created, then the text's pieces.
  const hash = sha256Parts();
  hash.update(`${state.stateHash}\n{"created":[`);
  const created = ctx.created;
  for (let at = 0; at < created.length; at += HASH_SLICE) {
    // Ids are hex: a slice never ends inside a surrogate pair.
    hash.update(created.slice(at, at + HASH_SLICE));
    yield;
  }
  hash.update('],"entry":');
  for (let i = 0; i < pieces.length; i++) {
    hash.update(pieces[i]!);
    if (i > 0 && i % CHUNK === 0) yield;
  }
  hash.update(`,"runs":${runDeltasText(result.value, ctx.touchedRuns, ctx)}}`);
  const recordedHash = entry.verification?.stateHash;
  const stateHash = ctx.withheld === true && recordedHash !== undefined ? recordedHash : hash.hex();
  return ok([finish(state, result.value, stateHash), ctx.effects ?? []]);
}

/** Characters of the created ids hashed per step. */
const HASH_SLICE = 1 << 18;

/** The checks before an entry is dispatched, and its apply context. */
function startApply(
  state: ThreadState,
  entry: LogEntry,
  options: ThreadMachineOptions,
  effects: boolean,
): Result<ApplyContext> {
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
  return ok({
    entry,
    options,
    effects: effects ? [] : undefined,
    created: '',
    touchedRuns: [],
    runEvents: undefined,
  });
}

/** The state after an entry: `result` of its dispatch, one longer, with its hash. */
function finish(state: ThreadState, result: ThreadState, stateHash: string): ThreadState {
  // Every dispatch path that changes something returns a fresh object no one else has seen yet,
  // so it is finished in place; only an unchanged `state` must be copied.
  const next = result === state ? copyThreadState(state) : result;
  next.length = state.length + 1;
  next.stateHash = stateHash;
  return next;
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

type Creation = Extract<ThreadEvent, { type: 'thread_created' | 'state_imported' }>;

const applyCreation = (state: ThreadState, event: Creation, ctx: ApplyContext) =>
  runSteps(applyCreationSteps(state, event, ctx));

function* applyCreationSteps(
  state: ThreadState,
  event: Creation,
  ctx: ApplyContext,
): Steps<Result<ThreadState>> {
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
    const nodes = event.state.nodes;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (node.kind === 'system') latestSystemNodeId = node.id;
      nodeMeta = vecPush(nodeMeta, { logIndex: ctx.entry.index });
      addCreated(ctx, node.id);
      ctx.effects?.push({ type: 'node_appended', node, meta: { logIndex: ctx.entry.index } });
      if (i > 0 && i % CHUNK === 0) yield;
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
