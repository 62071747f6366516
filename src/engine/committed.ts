/**
 * The views of what a command committed, built from the thread state it committed instead of
 * read back: the thread, node and run views an answer shows, in the shapes the read API
 * (src/reads) answers with, so a caller can answer a write without reading it again.
 */
import { getNode, isCurrent, type NodeKind, type SemanticNodeType } from '../core/graph/index.js';
import type { JsonValue } from '../core/json.js';
import type { WorkflowState } from '../core/run/index.js';
import type { NodeTaint, NodeUsage, ThreadSpend, ThreadState } from '../core/thread/index.js';
import { vecGet } from '../core/thread/vec.js';
import type { ReadModelChanges } from '../store/read-model/rows.js';

/** A thread as the read API shows it. */
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

/** A causal node as the read API shows it. */
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

/** A run as the read API shows it: its row's columns and its WorkflowState. */
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
