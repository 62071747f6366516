/**
 * What the read API answers with: the parsed views of read-model rows (and of log entries), and
 * the conversions from the rows the store's queries return. The thread, node and run views are
 * the engine's (engine/committed.ts), since a command's answer carries them for what it wrote.
 */
import type { NodeKind } from '../core/graph/index.js';
import type { JsonValue } from '../core/json.js';
import type { LogEntry } from '../core/log/index.js';
import type { NodeView, RunView, ThreadView } from '../engine/committed.js';
import { DEFAULT_TENANT } from '../engine/tenancy.js';
import type { ActivityRow, ApprovalState, NodeWithParents } from '../store/read-model/queries.js';
import type { ApprovalRow, LogEntryRow, RunRow, ThreadRow } from '../store/read-model/rows.js';
import type { AuditRow } from '../store/tables/index.js';

export type { NodeView, RunView, ThreadView } from '../engine/committed.js';

/** A node as callers name it: its thread and its id. */
export interface NodeKey {
  threadId: string;
  id: string;
}

/** A memory item: a current semantic head with its normalised type and key. */
export interface MemoryView {
  type: string;
  key: string;
  node: NodeView;
}

/** A log entry as a list shows it, without its body. */
export interface EventHeadView {
  threadId: string;
  index: number;
  id: string;
  type: string;
  recordedAt: Date;
}

export interface EventView extends EventHeadView {
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
