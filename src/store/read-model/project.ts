import { canonicalJson } from '../../core/canonical.js';
import {
  type CausalNode,
  CHUNK,
  getNode,
  getResourceHead,
  getResourceHeads,
  isCurrent,
  parseSemanticResourceKey,
  runSteps,
  type Steps,
} from '../../core/graph/index.js';
import type { LogEntry } from '../../core/log/index.js';
import type { Spend, WorkflowState } from '../../core/run/index.js';
import { type EntryTextParts, joinParts, nodesEntryParts } from '../../core/thread/entry-text.js';
import type { NodeMeta, RecordedNode, ThreadEffect, ThreadState } from '../../core/thread/index.js';
import type {
  ApprovalRow,
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
 * belong to — the state's own id, except while a fork replays the prefix it copied. `text` is
 * canonicalJson(entry) when the caller has it, and `parts` the same in parts (a commit has both:
 * see core/thread/entry-text.ts).
 */
export function projectEntry(
  prev: ThreadState,
  next: ThreadState,
  effects: readonly ThreadEffect[],
  entry: LogEntry,
  threadId: string = next.config?.threadId ?? '',
  text?: string,
  parts?: EntryTextParts,
): ReadModelChanges {
  return runSteps(projectEntrySteps(prev, next, effects, entry, threadId, text, parts));
}

/**
 * `projectEntry` in steps (see `Steps`): the rows of the nodes an entry created, a chunk of
 * nodes at a time — for an entry that creates very many (an import). Same result.
 */
export function* projectEntrySteps(
  prev: ThreadState,
  next: ThreadState,
  effects: readonly ThreadEffect[],
  entry: LogEntry,
  threadId: string = next.config?.threadId ?? '',
  text?: string,
  parts?: EntryTextParts,
): Steps<ReadModelChanges> {
  const created: Array<{ node: CausalNode; meta: NodeMeta }> = [];
  for (const effect of effects) {
    if (effect.type === 'node_appended') created.push({ node: effect.node, meta: effect.meta });
  }
  const newIds = new Set(created.map((c) => c.node.id));
  const frontier = new Set(next.graph.frontier);
  const known = parts ?? (text === undefined ? nodesEntryParts(entry) : undefined);
  const payloadTexts = known === undefined ? undefined : payloadsById(entry, known);
  const nodes: NodeRow[] = [];
  const nodeParents: NodeParentRow[] = [];
  const touchedKeys = new Set<string>();
  for (let i = 0; i < created.length; i++) {
    const { node, meta } = created[i]!;
    if (i > 0 && i % CHUNK === 0) yield;
    nodes.push(
      nodeRow(
        threadId,
        node,
        meta,
        frontier.has(node.id),
        isCurrent(next.graph, node.id),
        payloadTexts?.get(node.id),
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
    entries: [
      {
        ...logEntryRow(
          threadId,
          entry,
          text ?? (known === undefined ? undefined : joinParts(known)),
        ),
        ...(known === undefined ? {} : { parts: known }),
      },
    ],
    thread: threadRow(threadId, next, entry),
    nodes,
    nodeParents,
    nodeFlags: flagChanges(prev, frontier, newIds, touchedKeys),
    resourceHeads: [...touchedKeys].map((key) => headRow(threadId, key, next)),
    ...runChanges(threadId, prev, next, entry.index),
  };
}

/**
 * The current-state rows of a thread whose history is shared (a fork, see lineage.ts): every
 * resource head, run and spend row of `state`, which its shared node rows do not carry. Runs
 * take the index of their last change from `runIndex`.
 */
export function projectSharedState(
  threadId: string,
  state: ThreadState,
  runIndex: (runId: string) => number,
): Pick<ReadModelChanges, 'resourceHeads' | 'runs' | 'runSpend'> {
  const runs: RunRow[] = [];
  const runSpend: RunSpendRow[] = [];
  for (const runId of state.runOrder) {
    const after = state.runs.get(runId)!;
    runs.push(runRow(threadId, after, runIndex(runId)));
    spendRows(threadId, runId, 'model', undefined, after.model_breakdown, runSpend);
    spendRows(threadId, runId, 'node', undefined, after.node_breakdown, runSpend);
  }
  const resourceHeads = getResourceHeads(state.graph).map((head) =>
    headRow(threadId, head.resourceKey!, state),
  );
  return { resourceHeads, runs, runSpend };
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

/** The payload texts of the parts by node id. */
function payloadsById(entry: LogEntry, parts: EntryTextParts): Map<string, string> {
  const recorded = (entry.event as unknown as { nodes: RecordedNode[] }).nodes;
  const byId = new Map<string, string>();
  for (let i = 0; i < recorded.length; i++) byId.set(recorded[i]!.id, parts.payloads[i]!);
  return byId;
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
    baseThreadId: null,
    baseLogLength: null,
    baseNodeCount: null,
    deletedAt: null,
    // Retention is not in the log: the engine sets it on a new thread's row (retention.ts).
    expiresAt: null,
    // Nor is the salt secret: the engine sets it on a new thread's row (payload-salts.ts).
    payloadSalt: null,
    nodeCount: state.graph.count,
    spendInputTokens: state.spend.inputTokens,
    spendOutputTokens: state.spend.outputTokens,
    spendCostUsd: state.spend.costUsd,
    spendCalls: state.spend.calls,
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
): { runs: RunRow[]; runSpend: RunSpendRow[]; approvals: ApprovalRow[] } {
  const runs: RunRow[] = [];
  const runSpend: RunSpendRow[] = [];
  const approvals: ApprovalRow[] = [];
  for (const runId of next.runOrder) {
    const before = prev.runs.get(runId);
    const after = next.runs.get(runId)!;
    if (before === after) continue;
    runs.push(runRow(threadId, after, logIndex));
    approvals.push(...approvalChanges(threadId, before, after, logIndex));
    spendRows(threadId, runId, 'model', before?.model_breakdown, after.model_breakdown, runSpend);
    spendRows(threadId, runId, 'node', before?.node_breakdown, after.node_breakdown, runSpend);
  }
  return { runs, runSpend, approvals };
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
    waitingFor: run.status === 'waiting' ? (run.waiting_for ?? 'human_approval') : null,
  };
}

/** When a waiting run's request was made (older states may lack `waiting_since`). */
const requestedAt = (run: WorkflowState) => new Date(run.waiting_since ?? run.updated_at);

/** A request of `run`, which is waiting, as pending. */
function pendingApproval(threadId: string, run: WorkflowState, logIndex: number): ApprovalRow {
  return {
    threadId,
    runId: run.run_id,
    requestedAt: requestedAt(run),
    tenantId: DEFAULT_TENANT,
    state: 'pending',
    waitingFor: run.waiting_for ?? 'human_approval',
    prompt: run.pending_approval === undefined ? null : canonicalJson(run.pending_approval),
    expiresAt: run.waiting_timeout_at === undefined ? null : new Date(run.waiting_timeout_at),
    requestIndex: logIndex,
    resolvedAt: null,
    resolvedIndex: null,
    decision: null,
    response: null,
  };
}

/**
 * The approval rows an entry changes for one run: the request `before` waited on settled
 * (expired when the run timed out, else resolved, with the decision a resume wrote) and a new
 * request when `after` waits. `requestIndex` of a settled request is not known from the states;
 * the store keeps the stored one (see upsertApprovals).
 */
function approvalChanges(
  threadId: string,
  before: WorkflowState | undefined,
  after: WorkflowState,
  logIndex: number,
): ApprovalRow[] {
  const wasWaiting = before?.status === 'waiting';
  const waits = after.status === 'waiting';
  const same =
    wasWaiting && waits && requestedAt(before).getTime() === requestedAt(after).getTime();
  if (same) return [];
  const rows: ApprovalRow[] = [];
  if (wasWaiting) {
    const settled = pendingApproval(threadId, before, logIndex);
    const decision = after.status === 'timeout' ? undefined : after.memory.human_decision;
    const response = after.status === 'timeout' ? undefined : after.memory.human_response;
    rows.push({
      ...settled,
      state: after.status === 'timeout' ? 'expired' : 'resolved',
      resolvedAt: new Date(after.updated_at),
      resolvedIndex: logIndex,
      decision: typeof decision === 'string' ? decision : null,
      response: response === undefined ? null : canonicalJson(response),
    });
  }
  if (waits) rows.push(pendingApproval(threadId, after, logIndex));
  return rows;
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
