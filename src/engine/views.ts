/**
 * What the read API answers with: the parsed views of read-model rows (and of log entries), and
 * the conversions from the rows the store's queries return.
 */
import { getNode, isCurrent, type NodeKind, type SemanticNodeType } from '../core/graph/index.js';
import type { JsonValue } from '../core/json.js';
import type { LogEntry } from '../core/log/index.js';
import type { WorkflowState } from '../core/run/index.js';
import type { NodeTaint, NodeUsage, ThreadSpend, ThreadState } from '../core/thread/index.js';
import { vecGet } from '../core/thread/vec.js';
import type { ActivityRow, ApprovalState, NodeWithParents } from '../store/read-model/queries.js';
import type {
  ApprovalRow,
  LogEntryRow,
  ReadModelChanges,
  RunRow,
  ThreadRow,
} from '../store/read-model/rows.js';
import type { AuditRow } from '../store/tables/index.js';
import { DEFAULT_TENANT } from './tenancy.js';

export interface ThreadView {
  /** The thread's id as the reader names it (a tenant: its id; the system: its storage key). */
  id: string;
  /** Where the thread is stored: how the store and the event hub name it. Never shown. */
  key: string;
  tenantId: string;
  createdAt: Date;
  updatedAt: Date;
  metadata: JsonValue;
  nodeTypes: SemanticNodeType[];
  allowDynamicNodeTypes: boolean;
  logLength: number;
  /** Nodes in the causal graph (kept on the thread row with each commit). */
  nodeCount: number;
  /**
   * Token usage and cost as of `logLength`, kept on the thread row with each commit; null when
   * the row does not know it (last written before it was kept, or by a log-only append).
   */
  spend: ThreadSpend | null;
  stateHash: string;
  frontier: string[];
  forkedFrom: { threadId: string; upToIndex: number } | null;
  /**
   * When the retention sweeper deletes the thread; null: never. Undefined in the view a write on
   * an existing thread answers with (see CommittedViews): the expiry is no part of the log, so
   * the writer does not know it, and whoever shows it reads it.
   */
  expiresAt: Date | null | undefined;
  /** Whether new nodes' payloads get a `weft:salt` field (createThread's saltPayloads). */
  saltedPayloads: boolean;
}

/** A node as callers name it: its thread and its id. */
export interface NodeKey {
  threadId: string;
  id: string;
}

export interface NodeView {
  threadId: string;
  id: string;
  kind: NodeKind;
  parentIds: string[];
  payload: JsonValue;
  createdAt: Date;
  sequence: number;
  resourceKey: string | null;
  logIndex: number;
  runId: string | null;
  taint: NodeTaint | null;
  usage: NodeUsage | null;
  isFrontier: boolean;
  isCurrent: boolean;
}

/** A memory item: a current semantic head with its normalised type and key. */
export interface MemoryView {
  type: string;
  key: string;
  node: NodeView;
}

export interface RunView {
  threadId: string;
  id: string;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  logIndex: number;
  state: WorkflowState;
}

export interface EventView {
  threadId: string;
  index: number;
  id: string;
  type: string;
  recordedAt: Date;
  entry: LogEntry;
}

export interface ThreadDiffView {
  commonPrefix: number;
  onlyA: EventView[];
  onlyB: EventView[];
}

const parse = <T>(text: string): T => JSON.parse(text) as T;

export function toThreadView(row: ThreadRow): ThreadView {
  return {
    id: row.id,
    key: row.id,
    tenantId: row.tenantId ?? DEFAULT_TENANT,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    metadata: parse(row.metadata),
    nodeTypes: parse(row.nodeTypes),
    allowDynamicNodeTypes: row.allowDynamicNodeTypes,
    logLength: row.logLength,
    nodeCount: row.nodeCount ?? 0,
    spend:
      row.spendInputTokens === null ||
      row.spendOutputTokens === null ||
      row.spendCostUsd === null ||
      row.spendCalls === null
        ? null
        : {
            inputTokens: row.spendInputTokens,
            outputTokens: row.spendOutputTokens,
            costUsd: row.spendCostUsd,
            calls: row.spendCalls,
          },
    stateHash: row.stateHash,
    frontier: parse(row.frontier),
    forkedFrom:
      row.forkedFromId === null
        ? null
        : { threadId: row.forkedFromId, upToIndex: row.forkedUpToIndex ?? 0 },
    expiresAt: row.expiresAt ?? null,
    saltedPayloads: row.payloadSalt != null,
  };
}

export function toNodeView(row: NodeWithParents): NodeView {
  return {
    threadId: row.threadId,
    id: row.id,
    kind: row.kind as NodeKind,
    parentIds: row.parentIds,
    payload: parse(row.payload),
    createdAt: row.createdAt,
    sequence: row.sequence,
    resourceKey: row.resourceKey,
    logIndex: row.logIndex,
    runId: row.runId,
    taint: row.taint === null ? null : parse(row.taint),
    usage: row.usage === null ? null : parse(row.usage),
    isFrontier: row.isFrontier,
    isCurrent: row.isCurrent,
  };
}

export function toRunView(row: RunRow): RunView {
  return {
    threadId: row.threadId,
    id: row.id,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    startedAt: row.startedAt,
    logIndex: row.logIndex,
    state: parse(row.state),
  };
}

export function toEventView(row: LogEntryRow): EventView {
  return {
    threadId: row.threadId,
    index: row.index,
    id: row.entryId,
    type: row.type,
    recordedAt: row.recordedAt,
    entry: parse(row.entry),
  };
}

/** A log entry as the event view of thread `threadId`. */
export function eventOf(threadId: string, entry: LogEntry): EventView {
  return {
    threadId,
    index: entry.index,
    id: entry.id,
    type: entry.event.type,
    recordedAt: new Date(entry.recordedAt),
    entry,
  };
}

/** A run's request for human input, as the approvals inbox lists it. */
export interface ApprovalView {
  threadId: string;
  runId: string;
  state: ApprovalState;
  waitingFor: string;
  /** What the run asked the approver (its pending_approval), if anything. */
  prompt: JsonValue | null;
  requestedAt: Date;
  expiresAt: Date | null;
  /** Log index of the entry that made the request. */
  requestIndex: number;
  resolvedAt: Date | null;
  resolvedIndex: number | null;
  decision: string | null;
  response: JsonValue | null;
}

export function toApprovalView(row: ApprovalRow): ApprovalView {
  return {
    threadId: row.threadId,
    runId: row.runId,
    state: row.state as ApprovalState,
    waitingFor: row.waitingFor,
    prompt: row.prompt === null ? null : parse(row.prompt),
    requestedAt: row.requestedAt,
    expiresAt: row.expiresAt,
    requestIndex: row.requestIndex,
    resolvedAt: row.resolvedAt,
    resolvedIndex: row.resolvedIndex,
    decision: row.decision,
    response: row.response === null ? null : parse(row.response),
  };
}

/** One committed entry in the tenant's activity feed, numbered by `seq`. */
export type ActivityView = ActivityRow;
/** An entry of a tenant's audit trail (a thread deletion). */
export type AuditView = AuditRow;

/**
 * What a committed entry left in the read model, as the (unscoped) read API would answer right
 * after the commit, threads named by storage key: the thread, the nodes an answer shows about it
 * (the new nodes, their parents, the frontier's first FRONTIER_VIEWS) and the runs the entry
 * changed. A command's answer carries it under COMMITTED, so that a caller can answer without
 * reading back what was just written. `thread` is absent when the writer does not know the
 * thread's tenant.
 */
export interface CommittedViews {
  thread?: ThreadView;
  nodes: NodeView[];
  runs: RunView[];
}

/** How many frontier nodes CommittedViews holds: as many as one answer lists. */
export const FRONTIER_VIEWS = 1000;

/**
 * Where an answer carries the views of what its command committed, built on first call (most
 * callers never ask). A non-enumerable symbol property, so it is no part of the answer as a
 * value (its JSON, a copy, a comparison): an idempotency record stores none, and a retry
 * answered from one has none.
 */
export const COMMITTED: unique symbol = Symbol('weft.committed');

/** An answer that may carry the views of what its command committed. */
export interface CarriesCommitted {
  [COMMITTED]?: () => CommittedViews;
}

/** `answer` carrying `views` (see COMMITTED), when it is an object that can. */
export function carrying<T>(answer: T, views: (() => CommittedViews) | undefined): T {
  if (views !== undefined && typeof answer === 'object' && answer !== null) {
    Object.defineProperty(answer, COMMITTED, { value: views, enumerable: false });
  }
  return answer;
}

/**
 * The views of `changes` (see CommittedViews), projected from an entry that took the thread to
 * `state`, built when first asked for. They are built from the (persistent) state's values and
 * the rows' scalars taken now, never the rows' texts: the store may seal those in place as it
 * writes. `tenantId` undefined: the thread view is left out; `expiresAt` undefined: not known.
 */
export function committedViews(
  changes: ReadModelChanges,
  state: ThreadState,
  thread: { tenantId: string | undefined; salted: boolean; expiresAt: Date | null | undefined },
): () => CommittedViews {
  const { id: threadId, createdAt, updatedAt } = changes.thread;
  const created = changes.nodes.map((row) => row.id);
  const changedRuns = changes.runs.map((row) => ({
    id: row.id,
    status: row.status,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    startedAt: row.startedAt,
    logIndex: row.logIndex,
  }));
  let built: CommittedViews | undefined;
  return () => {
    built ??= build();
    return built;
  };

  function build(): CommittedViews {
    const frontier = new Set(state.graph.frontier);
    const nodes: NodeView[] = [];
    const shown = new Set<string>();
    const show = (id: string) => {
      if (shown.has(id)) return;
      shown.add(id);
      const view = nodeViewOf(threadId, state, id, frontier);
      if (view !== undefined) nodes.push(view);
    };
    for (const id of created) show(id);
    for (const child of [...nodes]) for (const id of child.parentIds) show(id);
    for (const id of state.graph.frontier.slice(0, FRONTIER_VIEWS)) show(id);
    const runs: RunView[] = [];
    for (const row of changedRuns) {
      const run = state.runs.get(row.id);
      if (run !== undefined) runs.push({ ...row, threadId, state: run });
    }
    const config = state.config;
    if (thread.tenantId === undefined || config === null) return { nodes, runs };
    return {
      thread: {
        id: threadId,
        key: threadId,
        tenantId: thread.tenantId,
        createdAt,
        updatedAt,
        metadata: config.metadata,
        nodeTypes: config.nodeTypes,
        allowDynamicNodeTypes: config.allowDynamicNodeTypes,
        logLength: state.length,
        nodeCount: state.graph.count,
        spend: { ...state.spend },
        stateHash: state.stateHash,
        frontier: [...state.graph.frontier],
        forkedFrom: config.forkedFrom ?? null,
        expiresAt: thread.expiresAt,
        saltedPayloads: thread.salted,
      },
      nodes,
      runs,
    };
  }
}

/** Node `id` of `state` as the read API shows it in thread `threadId` (storage key). */
function nodeViewOf(
  threadId: string,
  state: ThreadState,
  id: string,
  frontier: ReadonlySet<string>,
): NodeView | undefined {
  const node = getNode(state.graph, id);
  const meta = node === undefined ? undefined : vecGet(state.nodeMeta, node.sequence - 1);
  if (node === undefined || meta === undefined) return undefined;
  return {
    threadId,
    id,
    kind: node.kind,
    parentIds: [...node.parents],
    payload: node.payload,
    createdAt: new Date(node.createdAt),
    sequence: node.sequence,
    resourceKey: node.resourceKey ?? null,
    logIndex: meta.logIndex,
    runId: meta.runId ?? null,
    taint: meta.taint ?? null,
    usage: meta.usage ?? null,
    isFrontier: frontier.has(id),
    isCurrent: isCurrent(state.graph, id),
  };
}
