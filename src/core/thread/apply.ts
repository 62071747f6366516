import {
  canonicalJson,
  canonicalObject,
  isCanonicallyOrdered,
  OMIT,
  quoteJson,
} from '../canonical.js';
import { err, isWeftFailure, ok, type Result, type WeftError } from '../errors.js';
// Internal to the core (not re-exported): the append of recorded nodes, checked as recorded.
import { appendRecordedNodes } from '../graph/append.js';
import {
  type CausalNode,
  createGraph,
  type GraphState,
  getNode,
  type ImportLimits,
  importAgentState,
} from '../graph/index.js';
import { chainStateHashText, type LogEntry, type LogMachine } from '../log/index.js';
// Internal to the core (not re-exported): the parse of a recorded action, for replay.
import { parseRecordedRunAction } from '../run/actions.js';
import {
  type AnyRunAction,
  createWorkflowState,
  hydrateWorkflowState,
  type InternalRunAction,
  isTerminalStatus,
  type MemoryLimits,
  type PriceTable,
  type RunEvent,
  reduceRun,
  type WorkflowState,
  type WorkflowStateConfig,
} from '../run/index.js';
// Internal to the core (not re-exported): reduceRun without a second parse of the action.
import { reduceParsedRun } from '../run/reducer.js';
import { checkEventShape } from './event-shape.js';
import type { NodeTaint, NodeUsage, RecordedNode, ThreadEvent } from './events.js';
import { RunMap } from './run-map.js';
import {
  copyThreadState,
  createEmptyThreadState,
  type NodeMeta,
  type ThreadSpend,
  type ThreadState,
} from './state.js';
import { type Vec, vecGet, vecPush } from './vec.js';

/** What applying an entry caused, for the runtime to publish after commit. Never executed here. */
export type ThreadEffect =
  | { type: 'thread_created'; threadId: string }
  | { type: 'node_appended'; node: CausalNode; meta: NodeMeta }
  | { type: 'run_started'; runId: string }
  | { type: 'run_status_changed'; runId: string; from: string; to: string }
  | {
      type: 'approval_requested';
      runId: string;
      waitingFor: string;
      pendingApproval: unknown;
      timeoutAt: string | undefined;
    }
  | { type: 'run_event'; runId: string; event: RunEvent };

export interface ThreadMachineOptions {
  /**
   * Take recorded node ids as given instead of recomputing them from content. Only for replaying
   * a log this code wrote itself (its own store), with `verify: 'strict'` (or `'present'` on fully
   * signed logs): the state hash commits to every byte of each entry, payloads included, so a
   * payload changed after signing still fails verification at its index. It proves nothing about
   * a log from elsewhere (`weft import`): whoever wrote it could compute every hash, including
   * over a node whose id is not its content's. Leave this off there, and every id is recomputed
   * and checked (NODE_ID_MISMATCH). Every other node rule is checked either way.
   */
  trustRecordedIds?: boolean;
  prices?: PriceTable;
  memoryLimits?: MemoryLimits;
  importLimits?: ImportLimits;
}

type Applied = Result<[ThreadState, ThreadEffect[]]>;

const invalid = (message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message,
  issues: [{ path: '$.event', message }],
});

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
  const stateHash = chainStateHashText(state.stateHash, delta);
  // Every dispatch path that changes something returns a fresh object no one else has seen yet,
  // so it is finished in place; only an unchanged `state` must be copied.
  const next = result.value === state ? copyThreadState(state) : result.value;
  next.length = state.length + 1;
  next.stateHash = stateHash;
  return ok([next, ctx.effects ?? []]);
}

/**
 * Canonical `{runId: delta}` of the runs an entry touched: the facts the reducer emitted, in
 * order, plus the run's headline counters after the entry. O(what changed) — the run state
 * itself (memory, histories) is never rehashed: the state hash covers what identifies the state, not what grows with it.
 */
function runDeltasText(state: ThreadState, touched: readonly string[], ctx: ApplyContext): string {
  if (touched.length === 0) return '{}';
  const runs: Record<string, unknown> = {};
  for (const runId of touched) {
    const run = state.runs.get(runId)!;
    runs[runId] = {
      events: ctx.runEvents?.get(runId) ?? [],
      status: run.status,
      iteration_count: run.iteration_count,
      retry_count: run.retry_count,
      total_tokens_used: run.total_tokens_used,
      total_cost_usd: run.total_cost_usd,
      updated_at: run.updated_at,
    };
  }
  return canonicalJson(runs);
}

/**
 * The canonical text of the entry less its signature, which is what the state hash commits to:
 * editing any field of an entry — payloads included — changes the hash. With the stored text at
 * hand (replay from a store) nothing is serialised at all. Entries read back from the log are
 * already in canonical key order, so otherwise their text is one native stringify; the
 * signature is the last key in canonical order (`verification` sorts after `schemaVersion`), and
 * a quote inside a string value is always escaped, so the last `,"verification":` in the text is
 * the signature's.
 */
function unsignedEntryText(entry: LogEntry, stored?: string): string {
  if (stored !== undefined) return withoutSignature(stored, entry);
  if (!isCanonicallyOrdered(entry)) {
    return canonicalObject(entry as unknown as Record<string, unknown>, (key) =>
      key === 'verification' ? OMIT : undefined,
    );
  }
  return withoutSignature(JSON.stringify(entry), entry);
}

function withoutSignature(text: string, entry: LogEntry): string {
  if (entry.verification === undefined) return text;
  // The text ends with `,"verification":{"stateHash":<hash>}}`. For a hash that needs no
  // escaping its start is known; a match there cannot be anything else, since `,"` never occurs
  // inside a JSON string. Otherwise search for it.
  const at = text.length - SIGNATURE_OVERHEAD - entry.verification.stateHash.length;
  const cut =
    at > 0 && text.startsWith(SIGNATURE_START, at) ? at : text.lastIndexOf(',"verification":');
  return text.slice(0, cut) + '}';
}

const SIGNATURE_START = ',"verification":{"stateHash":"';
/** Characters of the signature besides the hash: its start, the closing quote and two braces. */
const SIGNATURE_OVERHEAD = SIGNATURE_START.length + 3;

interface ApplyContext {
  entry: LogEntry;
  options: ThreadMachineOptions;
  /** Undefined when the caller discards effects: then none are built. */
  effects: ThreadEffect[] | undefined;
  /**
   * The ids of the nodes the entry created, as the canonical JSON of the list without its
   * brackets (`"id1","id2"`), built as they are created.
   */
  created: string;
  /** Ids of the runs the entry changed, each once. */
  touchedRuns: string[];
  /** The reducer's events per touched run, in order: part of the state-hash delta. Lazy. */
  runEvents: Map<string, RunEvent[]> | undefined;
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
  const graph =
    event.type === 'state_imported'
      ? importAgentState(event.state, config, ctx.options.importLimits)
      : createGraph(config);
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

/**
 * Appends recorded nodes — checked as recorded against the node rules every path into a graph
 * shares (see appendRecordedNodes), so a log cannot carry in what a live write would refuse —
 * checks each recomputed id, and derives taint, run links and spend. `field`: where the event
 * holds them (`$.event.nodes`, a list, or `$.event.goalNode`), for naming a refused node.
 */
function appendRecorded(
  state: ThreadState,
  recorded: readonly RecordedNode[],
  ctx: ApplyContext,
  field: string,
): Result<ThreadState> {
  if (recorded.length === 0) return ok(state);
  for (let i = 0; i < recorded.length; i++) {
    const { runId } = recorded[i]!;
    if (runId !== undefined && !state.runs.has(runId)) return err(runNotFound(runId));
  }
  // A recorded node is a draft with extra fields (id, runId, taint, usage) that append ignores.
  const list = field !== '$.event.goalNode';
  const appended = appendRecordedNodes(state.graph, recorded, ctx.entry.recordedAt, {
    trustIds: ctx.options.trustRecordedIds === true,
    label: (i) => `entry ${ctx.entry.index}, ${list ? `${field}[${i}]` : field}`,
  });
  if (!appended.ok) return appended;
  const { graph, nodes, created } = appended.value;
  let nodeMeta = state.nodeMeta;
  let latestSystemNodeId = state.latestSystemNodeId;
  let charges: Array<{ runId: string | undefined; nodeId: string; usage: NodeUsage }> | undefined;
  for (let i = 0; i < recorded.length; i++) {
    const want = recorded[i]!;
    const node = nodes[i]!;
    if (node.id !== want.id) {
      return err({
        code: 'NODE_ID_MISMATCH',
        message: `recorded node ${want.id} does not match its content (recomputed ${node.id}): the entry is corrupt`,
        nodeId: want.id,
      });
    }
    if (!created[i]) continue;
    const taint = want.taint ?? deriveTaint(graph, nodeMeta, node);
    const meta = nodeMetaOf(ctx.entry.index, want.runId, taint, want.usage);
    if (want.usage !== undefined) {
      charges ??= [];
      charges.push({ runId: want.runId, nodeId: node.id, usage: want.usage });
    }
    nodeMeta = vecPush(nodeMeta, meta, sameNodeMeta);
    if (node.kind === 'system') latestSystemNodeId = node.id;
    addCreated(ctx, node.id);
    ctx.effects?.push({ type: 'node_appended', node, meta });
  }
  let next = copyThreadState(state, latestSystemNodeId);
  next.graph = graph;
  next.nodeMeta = nodeMeta;
  if (charges !== undefined) {
    for (const charge of charges) {
      const charged = chargeUsage(next, charge.runId, charge.nodeId, charge.usage, ctx);
      if (!charged.ok) return charged;
      next = charged.value;
    }
  }
  return ok(next);
}

/**
 * A node's metadata, keys in the order {logIndex, runId, taint, usage}. The common shapes are
 * single literals, so a record kept for every node of the graph needs no separate property store.
 */
function nodeMetaOf(
  logIndex: number,
  runId: string | undefined,
  taint: NodeTaint | undefined,
  usage: NodeUsage | undefined,
): NodeMeta {
  if (taint === undefined && usage === undefined) {
    return runId === undefined ? { logIndex } : { logIndex, runId };
  }
  const meta: NodeMeta = { logIndex };
  if (runId !== undefined) meta.runId = runId;
  if (taint !== undefined) meta.taint = taint;
  if (usage !== undefined) meta.usage = usage;
  return meta;
}

/** Equal node metadata: lets a replay onto an older state share the newer one's (see vecPush). */
function sameNodeMeta(a: NodeMeta, b: NodeMeta): boolean {
  return (
    a.logIndex === b.logIndex &&
    a.runId === b.runId &&
    (a.taint === b.taint ||
      (a.taint !== undefined &&
        b.taint !== undefined &&
        canonicalJson(a.taint) === canonicalJson(b.taint))) &&
    (a.usage === b.usage ||
      (a.usage !== undefined &&
        b.usage !== undefined &&
        canonicalJson(a.usage) === canonicalJson(b.usage)))
  );
}

/** Taint flows to every descendant: a node with a tainted parent is tainted as derived. */
function deriveTaint(
  graph: GraphState,
  nodeMeta: Vec<NodeMeta>,
  node: CausalNode,
): NodeTaint | undefined {
  let from: string[] | undefined;
  const { parents } = node;
  // An index loop: for-of over a frozen array allocates an iterator result per step.
  for (let i = 0; i < parents.length; i++) {
    const parentId = parents[i] as string;
    const parent = getNode(graph, parentId);
    if (parent && vecGet(nodeMeta, parent.sequence - 1)?.taint) {
      from ??= [];
      from.push(parentId);
    }
  }
  return from === undefined ? undefined : { source: 'derived', derivedFrom: from };
}

export function getNodeMeta(state: ThreadState, nodeId: string): NodeMeta | undefined {
  const node = getNode(state.graph, nodeId);
  return node ? vecGet(state.nodeMeta, node.sequence - 1) : undefined;
}

const runNotFound = (runId: string): WeftError => ({
  code: 'NOT_FOUND',
  message: `run ${runId} does not exist in this thread`,
  entity: 'Run',
  id: runId,
});

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

function applyRunAction(
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
function applyInternal(
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
const setRun = (
  runs: ReadonlyMap<string, WorkflowState>,
  runId: string,
  run: WorkflowState,
): ReadonlyMap<string, WorkflowState> => RunMap.from(runs).set(runId, run);

function addCreated(ctx: ApplyContext, id: string): void {
  ctx.created = ctx.created === '' ? quoteJson(id) : `${ctx.created},${quoteJson(id)}`;
}

function touch(ctx: ApplyContext, runId: string): void {
  if (!ctx.touchedRuns.includes(runId)) ctx.touchedRuns.push(runId);
}

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

function chargeUsage(
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

function applyDeadline(
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

function applyWorkflowImport(
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

/** Runs a core function that reports bad input by throwing a WeftFailure, as a Result. */
function attempt<T>(fn: () => T): Result<T> {
  try {
    return ok(fn());
  } catch (error) {
    if (isWeftFailure(error)) return err(error.error);
    throw error;
  }
}
