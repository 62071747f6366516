/**
 * The rows of Weft's read-model tables as plain values (DateTime columns as Date, canonical JSON
 * columns as text). A `ReadModelChanges` is everything one or more applied log entries write;
 * the store applies it in one transaction together with the entries themselves.
 */

export interface LogEntryRow {
  threadId: string;
  index: number;
  entryId: string;
  type: string;
  recordedAt: Date;
  /** canonicalJson(entry): the exact text readers get back. */
  entry: string;
}

export interface ThreadRow {
  id: string;
  /** The tenant owning the thread; written when the row is created (default `default`), never changed. */
  tenantId?: string;
  createdAt: Date;
  updatedAt: Date;
  metadata: string;
  nodeTypes: string;
  allowDynamicNodeTypes: boolean;
  logLength: number;
  stateHash: string;
  frontier: string;
  forkedFromId: string | null;
  forkedUpToIndex: number | null;
}

export interface NodeRow {
  threadId: string;
  id: string;
  sequence: number;
  kind: string;
  payload: string;
  createdAt: Date;
  resourceKey: string | null;
  logIndex: number;
  runId: string | null;
  taint: string | null;
  usage: string | null;
  isFrontier: boolean;
  isCurrent: boolean;
}

/** A parent edge; nodes are named by sequence (`node.sequence`). */
export interface NodeParentRow {
  threadId: string;
  childSeq: number;
  parentSeq: number;
  position: number;
}

/** A change of the flags of a node written by an earlier entry (absent field: unchanged). */
export interface NodeFlagChange {
  nodeId: string;
  isFrontier?: boolean;
  isCurrent?: boolean;
}

export interface ResourceHeadRow {
  threadId: string;
  resourceKey: string;
  nodeId: string;
  semanticType: string | null;
  semanticKey: string | null;
}

export interface RunRow {
  threadId: string;
  id: string;
  tenantId: string;
  status: string;
  goal: string;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  waitingTimeoutAt: Date | null;
  executionDeadlineAt: Date | null;
  state: string;
  totalInputTokens: number;
  totalOutputTokens: number;
  totalCostUsd: number;
  logIndex: number;
}

export type SpendDimension = 'model' | 'node';

export interface RunSpendRow {
  threadId: string;
  runId: string;
  dimension: SpendDimension;
  key: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  calls: number;
}

/** A snapshot of the thread state after entries [0, index) (src/core/thread/snapshot.ts). */
export interface SnapshotRow {
  threadId: string;
  index: number;
  /** verification.stateHash of entry index - 1. */
  stateHash: string;
  /** SHA-256 (hex) of `state`. */
  checksum: string;
  state: string;
  createdAt: Date;
}

/**
 * What applying entries writes to one thread's tables. `thread` is the full row after the last
 * entry (an upsert); `created` says whether the thread row is new (the first entry is in
 * `entries`), so it must exist before the entries that reference it.
 */
export interface ReadModelChanges {
  threadId: string;
  created: boolean;
  entries: LogEntryRow[];
  thread: ThreadRow;
  /** New nodes in sequence order, with their flags as of the last entry. */
  nodes: NodeRow[];
  nodeParents: NodeParentRow[];
  /** Flag changes of nodes that existed before these entries. */
  nodeFlags: NodeFlagChange[];
  resourceHeads: ResourceHeadRow[];
  runs: RunRow[];
  runSpend: RunSpendRow[];
  /** Snapshots to store with these entries (a cache: optional). */
  snapshots?: SnapshotRow[];
}
