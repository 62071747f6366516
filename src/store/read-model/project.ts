import { canonicalJson } from '../../core/canonical.js';
import {
  type CausalNode,
  getNode,
  getResourceHead,
  isCurrent,
  parseSemanticResourceKey,
} from '../../core/graph/index.js';
import type { LogEntry } from '../../core/log/index.js';
import type { Spend, WorkflowState } from '../../core/run/index.js';
import type { NodeMeta, RecordedNode, ThreadEffect, ThreadState } from '../../core/thread/index.js';
import type {
  NodeFlagChange,
  NodeParentRow,
  NodeRow,
  ReadModelChanges,
  ResourceHeadRow,
  RunRow,
  RunSpendRow,
  ThreadRow,
} from './rows.js';

/**
 * The tenant of threads created without one (and of every row from before tenancy). A run row's
 * `tenantId` is a placeholder: the store writes the tenant of the run's thread.
 */
export const DEFAULT_TENANT = 'default';

/**
 * The read-model rows one applied entry writes, derived from the states before and after it and
 * the effects it produced. Pure and deterministic: projecting a log entry by entry gives the same
 * rows whether it happens at commit time or in a rebuild. `threadId` is the thread the rows
 * belong to — the state's own id, except while a fork replays the prefix it copied. `entryText`
 * is canonicalJson(entry) when the caller has it (a commit does).
 */
export function projectEntry(
  prev: ThreadState,
  next: ThreadState,
  effects: readonly ThreadEffect[],
  entry: LogEntry,
  threadId: string = next.config?.threadId ?? '',
  entryText?: string,
): ReadModelChanges {
  const created: Array<{ node: CausalNode; meta: NodeMeta }> = [];
  for (const effect of effects) {
    if (effect.type === 'node_appended') created.push({ node: effect.node, meta: effect.meta });
  }
  const newIds = new Set(created.map((c) => c.node.id));
  const frontier = new Set(next.graph.frontier);
  const texts = entryText === undefined ? nodesEntryTexts(entry) : undefined;
  const nodes: NodeRow[] = [];
  const nodeParents: NodeParentRow[] = [];
  const touchedKeys = new Set<string>();
  for (const { node, meta } of created) {
    nodes.push(
      nodeRow(
        threadId,
        node,
        meta,
        frontier.has(node.id),
        isCurrent(next.graph, node.id),
        texts?.payloads.get(node.id),
      ),
    );
    node.parents.forEach((parentId, position) => {
      const parentSeq = getNode(next.graph, parentId)?.sequence;
      if (parentSeq === undefined) throw new Error(`projectEntry: parent ${parentId} is unknown`);
      nodeParents.push({ threadId, childSeq: node.sequence, parentSeq, position });
    });
    if (node.resourceKey !== undefined) touchedKeys.add(node.resourceKey);
  }
  return {
    threadId,
    created: prev.length === 0,
    entries: [logEntryRow(threadId, entry, entryText ?? texts?.text)],
    thread: threadRow(threadId, next, entry),
    nodes,
    nodeParents,
    nodeFlags: flagChanges(prev, frontier, newIds, touchedKeys),
    resourceHeads: [...touchedKeys].map((key) => headRow(threadId, key, next)),
    ...runChanges(threadId, prev, next, entry.index),
  };
}

/** `text`: canonicalJson(entry) when the caller has it already. */
export function logEntryRow(threadId: string, entry: LogEntry, text?: string) {
  return {
    threadId,
    index: entry.index,
    entryId: entry.id,
    type: entry.event.type,
    recordedAt: new Date(entry.recordedAt),
    entry: text ?? canonicalJson(entry),
  };
}

/** Stands for a node's payload in an entry skeleton (see nodesEntryTexts). */
const PAYLOAD_MARK = '\u0000weft-payload:';
/** How the mark appears in canonical text: JSON escapes the NUL. */
const PAYLOAD_MARK_TEXT = canonicalJson(PAYLOAD_MARK).slice(0, -1);

/**
 * The canonical text of a `nodes_appended` entry and of each new node's payload (by node id),
 * canonicalising every payload once: the entry is written as a skeleton with a mark in place of
 * each payload, and the payload texts are spliced in — which is canonicalJson(entry) exactly,
 * since a payload's place and its key order do not depend on its value. Undefined (the caller
 * canonicalises as usual) for other entries, or if the marks are not found exactly once each.
 */
function nodesEntryTexts(
  entry: LogEntry,
): { text: string; payloads: Map<string, string> } | undefined {
  const event = entry.event as unknown as { type: string; nodes?: unknown };
  if (event.type !== 'nodes_appended' || !Array.isArray(event.nodes)) return undefined;
  const recorded = event.nodes as RecordedNode[];
  if (recorded.length < 2) return undefined;
  const payloads = recorded.map((node) => canonicalJson(node.payload));
  const skeleton = canonicalJson({
    ...entry,
    event: { ...event, nodes: recorded.map((node, i) => ({ ...node, payload: PAYLOAD_MARK + i })) },
  });
  const parts = skeleton.split(PAYLOAD_MARK_TEXT);
  if (parts.length !== recorded.length + 1) return undefined;
  let text = parts[0]!;
  for (let i = 0; i < recorded.length; i++) {
    const part = parts[i + 1]!;
    const tail = `${i}"`;
    if (!part.startsWith(tail)) return undefined;
    text += payloads[i]! + part.slice(tail.length);
  }
  const byId = new Map<string, string>();
  for (let i = 0; i < recorded.length; i++) byId.set(recorded[i]!.id, payloads[i]!);
  return { text, payloads: byId };
}

function threadRow(threadId: string, state: ThreadState, entry: LogEntry): ThreadRow {
  const config = state.config;
  if (config === null) throw new Error('projectEntry: the state after an entry has no config');
  return {
    id: threadId,
    createdAt: new Date(config.createdAt),
    updatedAt: new Date(entry.recordedAt),
    metadata: canonicalJson(config.metadata),
    nodeTypes: canonicalJson(config.nodeTypes),
    allowDynamicNodeTypes: config.allowDynamicNodeTypes,
    logLength: state.length,
    stateHash: state.stateHash,
    frontier: canonicalJson(state.graph.frontier),
    forkedFromId: config.forkedFrom?.threadId ?? null,
    forkedUpToIndex: config.forkedFrom?.upToIndex ?? null,
  };
}

function nodeRow(
  threadId: string,
  node: CausalNode,
  meta: NodeMeta,
  isFrontier: boolean,
  current: boolean,
  payloadText?: string,
): NodeRow {
  return {
    threadId,
    id: node.id,
    sequence: node.sequence,
    kind: node.kind,
    payload: payloadText ?? canonicalJson(node.payload),
    createdAt: new Date(node.createdAt),
    resourceKey: node.resourceKey ?? null,
    logIndex: meta.logIndex,
    runId: meta.runId ?? null,
    taint: meta.taint === undefined ? null : canonicalJson(meta.taint),
    usage: meta.usage === undefined ? null : canonicalJson(meta.usage),
    isFrontier,
    isCurrent: current,
  };
}

/** Nodes of earlier entries that left (or, in principle, joined) the frontier or lost headship. */
function flagChanges(
  prev: ThreadState,
  frontier: ReadonlySet<string>,
  newIds: ReadonlySet<string>,
  touchedKeys: ReadonlySet<string>,
): NodeFlagChange[] {
  const changes = new Map<string, NodeFlagChange>();
  const change = (nodeId: string) => {
    const existing = changes.get(nodeId);
    if (existing !== undefined) return existing;
    const fresh: NodeFlagChange = { nodeId };
    changes.set(nodeId, fresh);
    return fresh;
  };
  const before = new Set(prev.graph.frontier);
  for (const id of before) if (!frontier.has(id)) change(id).isFrontier = false;
  for (const id of frontier) if (!before.has(id) && !newIds.has(id)) change(id).isFrontier = true;
  for (const key of touchedKeys) {
    const oldHead = getResourceHead(prev.graph, key);
    if (oldHead !== undefined && !newIds.has(oldHead.id)) change(oldHead.id).isCurrent = false;
  }
  return [...changes.values()];
}

function headRow(threadId: string, resourceKey: string, state: ThreadState): ResourceHeadRow {
  const head = getResourceHead(state.graph, resourceKey);
  if (head === undefined) throw new Error(`projectEntry: resource ${resourceKey} has no head`);
  const semantic = parseSemanticResourceKey(resourceKey);
  return {
    threadId,
    resourceKey,
    nodeId: head.id,
    semanticType: semantic?.type ?? null,
    semanticKey: semantic?.key ?? null,
  };
}

/**
 * Runs whose state changed (the run map is persistent: an untouched run keeps its object) and
 * the spend breakdown keys that changed with them.
 */
function runChanges(
  threadId: string,
  prev: ThreadState,
  next: ThreadState,
  logIndex: number,
): { runs: RunRow[]; runSpend: RunSpendRow[] } {
  const runs: RunRow[] = [];
  const runSpend: RunSpendRow[] = [];
  for (const runId of next.runOrder) {
    const before = prev.runs.get(runId);
    const after = next.runs.get(runId)!;
    if (before === after) continue;
    runs.push(runRow(threadId, after, logIndex));
    spendRows(threadId, runId, 'model', before?.model_breakdown, after.model_breakdown, runSpend);
    spendRows(threadId, runId, 'node', before?.node_breakdown, after.node_breakdown, runSpend);
  }
  return { runs, runSpend };
}

export function runRow(threadId: string, run: WorkflowState, logIndex: number): RunRow {
  const date = (iso: string | undefined) => (iso === undefined ? null : new Date(iso));
  const startedAt = date(run.started_at);
  return {
    threadId,
    id: run.run_id,
    tenantId: DEFAULT_TENANT,
    status: run.status,
    goal: run.goal,
    createdAt: new Date(run.created_at),
    updatedAt: new Date(run.updated_at),
    startedAt,
    waitingTimeoutAt: date(run.waiting_timeout_at),
    executionDeadlineAt:
      startedAt === null ? null : new Date(startedAt.getTime() + run.max_execution_time_ms),
    state: canonicalJson(run),
    totalInputTokens: run.total_input_tokens,
    totalOutputTokens: run.total_output_tokens,
    totalCostUsd: run.total_cost_usd,
    logIndex,
  };
}

function spendRows(
  threadId: string,
  runId: string,
  dimension: 'model' | 'node',
  before: Record<string, Spend> | undefined,
  after: Record<string, Spend>,
  out: RunSpendRow[],
): void {
  for (const key of Object.keys(after).sort()) {
    const spend = after[key]!;
    const old = before?.[key];
    if (
      old !== undefined &&
      old.input_tokens === spend.input_tokens &&
      old.output_tokens === spend.output_tokens &&
      old.cost_usd === spend.cost_usd &&
      old.calls === spend.calls
    ) {
      continue;
    }
    out.push({
      threadId,
      runId,
      dimension,
      key,
      inputTokens: spend.input_tokens,
      outputTokens: spend.output_tokens,
      costUsd: spend.cost_usd,
      calls: spend.calls,
    });
  }
}
