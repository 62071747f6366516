/**
 * A Weft thread's checkpoints as the saver reads them: a fold over the thread's log entries
 * (`checkpoint_saved`, `checkpoint_writes_saved`, `checkpoints_cleared`, and the run entries of
 * its approvals), caught up from the engine before every read, so any process sees what every
 * other one wrote. It holds the serialized values; the array items decoded from them are kept
 * beside them (ItemCache).
 */
import type { LogEntry } from '../core/log/index.js';
import { isTerminalStatus, isWorkflowStatus } from '../core/run/index.js';
import type { Encoded } from './codec.js';
import { ItemCache } from './items.js';

export type ChannelVersion = number | string;

/** How one (channel, version) value is stored (see the data of a checkpoint_saved entry). */
export type BlobRecord =
  | { c: string; v: ChannelVersion; x: string }
  | { c: string; v: ChannelVersion; l: string[] }
  | { c: string; v: ChannelVersion; b: ChannelVersion; a: string[] }
  | { c: string; v: ChannelVersion; e: 1 };

export interface CheckpointData {
  checkpoint: Encoded;
  metadata: Encoded;
  /** Values this entry adds to the thread's content store, by content hash. */
  values: Record<string, Encoded>;
  blobs: BlobRecord[];
  /**
   * The nodes this entry's messages became: `m` message id → node, `t` tool call id → its
   * tool_call node. Kept here so a fold need not read the nodes' payloads to learn it
   * (entries written before it was kept have none: their nodes' payloads tell).
   */
  n?: NodeRefs;
}

export interface NodeRefs {
  m?: Record<string, string>;
  t?: Record<string, string>;
}

/** A write's value: `x` its hash, or for a list `l` its items' hashes (shared with checkpoints). */
export type WriteRecord = {
  /** The write's index within its task (negative for special channels, see WRITES_IDX_MAP). */
  i: number;
  c: string;
} & ({ x: string } | { l: string[] });

export interface WritesData {
  taskPath: string;
  values: Record<string, Encoded>;
  writes: WriteRecord[];
}

export interface StoredCheckpoint {
  id: string;
  parentId: string | undefined;
  logIndex: number;
  checkpoint: Encoded;
  metadata: Encoded;
}

export interface StoredWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  value: { x: string } | { l: string[] };
}

/** An approval request made for interrupts of this thread, and how it ended. */
export interface ApprovalState {
  runId: string;
  requestIndex: number;
  checkpointId: string | undefined;
  interruptIds: string[];
  outcome?:
    | { kind: 'resolved'; decision: string; response: unknown; index: number }
    | { kind: 'ended'; reason: string; index: number };
}

export const versionKey = (channel: string, version: ChannelVersion) =>
  `${channel}\u0000${typeof version}:${version}`;

export class ThreadIndex {
  /** Entries folded so far: the index of the next entry to read. */
  length = 0;
  readonly checkpoints = new Map<string, StoredCheckpoint>();
  /** The greatest checkpoint id (LangGraph's ids order by time): the latest checkpoint. */
  latestId: string | undefined;
  readonly blobs = new Map<string, BlobRecord>();
  /** The content store: never cleared, since a later entry may refer to any value by hash. */
  readonly values = new Map<string, Encoded>();
  readonly writes = new Map<string, Map<string, StoredWrite>>();
  /** LangGraph message id → the causal node it became (graph state: survives a clear). */
  readonly messageNodes = new Map<string, string>();
  /** Tool call id → its tool_call node. */
  readonly toolCallNodes = new Map<string, string>();
  /** Array items decoded or encoded by this process (see ItemCache). */
  readonly items = new ItemCache();
  /** The Weft run approvals are requested on (the newest one this saver started). */
  runId: string | undefined;
  /** Whether that run reached a terminal status (completed, failed, cancelled, timed out). */
  runEnded = false;
  /** The LangGraph checkpoint at which the saver saw that run end, when it did. */
  runEndedAt: string | undefined;
  approvals: ApprovalState[] = [];
  /**
   * True when an entry's nodes were folded without their payloads and without refs (an entry
   * older than `CheckpointData.n`): messageNodes and toolCallNodes lack its nodes, which only a
   * write needs (the saver folds again with payloads before writing).
   */
  refsIncomplete = false;

  apply(entry: LogEntry): void {
    if (entry.index !== this.length) {
      throw new Error(`thread index: entry ${entry.index} does not follow ${this.length}`);
    }
    this.length += 1;
    const event = entry.event as unknown as Record<string, unknown>;
    switch (event.type) {
      case 'checkpoint_saved': {
        const data = event.data as unknown as CheckpointData;
        this.applyCheckpoint(
          event.checkpointId as string,
          event.parentCheckpointId as string | undefined,
          data,
          entry.index,
        );
        if (data.n === undefined) this.applyNodes(event.nodes);
        else this.applyRefs(data.n);
        return;
      }
      case 'checkpoint_writes_saved':
        this.applyWrites(
          event.checkpointId as string,
          event.taskId as string,
          event.data as unknown as WritesData,
        );
        this.applyNodes(event.nodes);
        return;
      case 'checkpoints_cleared':
        this.items.clear();
        this.checkpoints.clear();
        this.latestId = undefined;
        this.blobs.clear();
        this.writes.clear();
        return;
      case 'run_started':
        this.runId = event.runId as string;
        this.runEnded = false;
        return;
      case 'run_action_dispatched':
        if (event.runId === this.runId && endsRun(event.action)) {
          this.runEnded = true;
          this.runEndedAt = checkpointOfAction(event.action);
        }
        this.applyAction(event.runId as string, event.action as Record<string, unknown>, entry);
        return;
      case 'approval_resolved': {
        const payload = (event.action as { payload?: Record<string, unknown> }).payload ?? {};
        this.settle(event.runId as string, {
          kind: 'resolved',
          decision: String(payload.decision),
          response: payload.response,
          index: entry.index,
        });
        return;
      }
      case 'deadline_fired':
        if (event.runId === this.runId) this.runEnded = true;
        this.settle(event.runId as string, {
          kind: 'ended',
          reason: `the approval wait ran out (${String(event.deadline)} deadline)`,
          index: entry.index,
        });
        return;
      case 'run_cancelled':
        if (event.runId === this.runId) this.runEnded = true;
        this.settle(event.runId as string, {
          kind: 'ended',
          reason: `the run was cancelled: ${String(event.reason)}`,
          index: entry.index,
        });
        return;
      default:
        return;
    }
  }

  /** The pending approval request of this thread, if any. */
  pendingApproval(): ApprovalState | undefined {
    const last = this.approvals.at(-1);
    return last !== undefined && last.outcome === undefined ? last : undefined;
  }

  private applyCheckpoint(
    id: string,
    parentId: string | undefined,
    data: CheckpointData,
    logIndex: number,
  ): void {
    for (const [hash, value] of Object.entries(data.values)) this.values.set(hash, value);
    for (const blob of data.blobs) {
      const key = versionKey(blob.c, blob.v);
      if (!this.blobs.has(key)) this.blobs.set(key, blob);
    }
    if (this.latestId === undefined || id > this.latestId) this.latestId = id;
    this.checkpoints.set(id, {
      id,
      parentId,
      logIndex,
      checkpoint: data.checkpoint,
      metadata: data.metadata,
    });
  }

  private applyWrites(checkpointId: string, taskId: string, data: WritesData): void {
    for (const [hash, value] of Object.entries(data.values)) this.values.set(hash, value);
    let stored = this.writes.get(checkpointId);
    if (stored === undefined) {
      stored = new Map();
      this.writes.set(checkpointId, stored);
    }
    for (const write of data.writes) {
      const key = `${taskId}\u0000${write.i}`;
      // A regular write of a task is kept once (a retried task re-sends it); special writes
      // (errors, interrupts: negative indexes) are replaced by the newer one.
      if (write.i >= 0 && stored.has(key)) continue;
      stored.set(key, {
        taskId,
        taskPath: data.taskPath,
        idx: write.i,
        channel: write.c,
        value: 'l' in write ? { l: write.l } : { x: write.x },
      });
    }
  }

  private applyRefs(refs: NodeRefs): void {
    for (const [messageId, node] of Object.entries(refs.m ?? {})) {
      this.messageNodes.set(messageId, node);
    }
    for (const [callId, node] of Object.entries(refs.t ?? {})) this.toolCallNodes.set(callId, node);
  }

  private applyNodes(nodes: unknown): void {
    if (!Array.isArray(nodes)) return;
    for (const node of nodes as Array<{ id: string; kind: string; payload: unknown }>) {
      const payload = node.payload as Record<string, unknown> | null;
      if (payload === null) this.refsIncomplete = true;
      if (payload === null || typeof payload !== 'object') continue;
      if (typeof payload.messageId === 'string' && node.kind !== 'tool_call') {
        this.messageNodes.set(payload.messageId, node.id);
      }
      if (node.kind === 'tool_call' && typeof payload.toolCallId === 'string') {
        this.toolCallNodes.set(payload.toolCallId, node.id);
      }
    }
  }

  private applyAction(runId: string, action: Record<string, unknown>, entry: LogEntry): void {
    if (action.type !== 'request_human_input') return;
    const payload = (action.payload ?? {}) as Record<string, unknown>;
    const pending = (payload.pending_approval ?? {}) as Record<string, unknown>;
    const interrupts = Array.isArray(pending.interrupts) ? pending.interrupts : [];
    this.approvals.push({
      runId,
      requestIndex: entry.index,
      checkpointId: typeof pending.checkpointId === 'string' ? pending.checkpointId : undefined,
      interruptIds: interrupts
        .map((i) => (i as { id?: unknown } | null)?.id)
        .filter((id): id is string => typeof id === 'string'),
    });
  }

  private settle(runId: string, outcome: NonNullable<ApprovalState['outcome']>): void {
    const last = this.approvals.at(-1);
    if (last !== undefined && last.runId === runId && last.outcome === undefined) {
      last.outcome = outcome;
    }
  }
}

const ENDING_ACTIONS: ReadonlySet<unknown> = new Set(['_complete', '_fail', '_timeout', '_cancel']);

/** True for an action that moves its run to a terminal status. */
function endsRun(action: unknown): boolean {
  const { type, payload } = (action ?? {}) as { type?: unknown; payload?: { status?: unknown } };
  if (ENDING_ACTIONS.has(type)) return true;
  return (
    type === 'set_status' && isWorkflowStatus(payload?.status) && isTerminalStatus(payload.status)
  );
}

/**
 * The action id names the checkpoint the status changed at, so that the fold of any process
 * knows it (ThreadIndex.runEndedAt) without a field of its own.
 */
const STATUS_ACTION_PREFIX = 'langgraph-checkpoint:';
export const statusActionId = (status: string, checkpointId: string) =>
  `${STATUS_ACTION_PREFIX}${checkpointId}:${status}`;

/** The checkpoint a saver's status action happened at, or undefined for anyone else's action. */
export function checkpointOfAction(action: unknown): string | undefined {
  const id = (action as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || !id.startsWith(STATUS_ACTION_PREFIX)) return undefined;
  return id.slice(STATUS_ACTION_PREFIX.length, id.lastIndexOf(':'));
}
