import type { AgentState, NodeKind, SemanticNodeType } from '../graph/index.js';
import type { JsonObject, JsonValue } from '../json.js';

/**
 * The facts a thread's log records. Names are past-tense; each event carries everything replay
 * needs, so applying it never consults a clock, an id source or the outside world.
 */

/** Provenance of untrusted data carried by a node (a run's TaintMetadata, camel-cased here). */
export interface NodeTaint {
  source: string;
  toolName?: string;
  serverId?: string;
  agentId?: string;
  /** For derived taint: the tainted ancestors it came from. */
  derivedFrom?: string[];
}

export interface NodeUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
}

/** One node as recorded: parents are already resolved, so replay needs no frontier lookup. */
export interface RecordedNode {
  id: string;
  kind: NodeKind;
  parents: string[];
  payload: JsonValue;
  resourceKey?: string;
  advance?: boolean;
  runId?: string;
  taint?: NodeTaint;
  usage?: NodeUsage;
}

export interface ThreadCreatedEvent {
  type: 'thread_created';
  threadId: string;
  metadata: JsonValue;
  nodeTypes: SemanticNodeType[];
  allowDynamicNodeTypes: boolean;
}

export interface StateImportedEvent {
  type: 'state_imported';
  threadId: string;
  metadata: JsonValue;
  nodeTypes: SemanticNodeType[];
  allowDynamicNodeTypes: boolean;
  state: AgentState;
}

export interface ThreadForkedEvent {
  type: 'thread_forked';
  threadId: string;
  fromThreadId: string;
  upToIndex: number;
}

export interface NodesAppendedEvent {
  type: 'nodes_appended';
  nodes: RecordedNode[];
}

export interface RunStartedEvent {
  type: 'run_started';
  runId: string;
  config: JsonObject;
  goalNode: RecordedNode;
}

export interface RunActionDispatchedEvent {
  type: 'run_action_dispatched';
  runId: string;
  action: JsonObject;
  /** Semantic `memory` nodes mirroring the memory keys this action wrote. */
  memoryNodes: RecordedNode[];
}

export interface ApprovalResolvedEvent {
  type: 'approval_resolved';
  runId: string;
  action: JsonObject;
  /** Semantic `memory` nodes mirroring the memory keys the resolution wrote. */
  memoryNodes: RecordedNode[];
}

export interface RunCancelledEvent {
  type: 'run_cancelled';
  runId: string;
  reason: string;
  rollback: boolean;
}

export interface UsageRecordedEvent {
  type: 'usage_recorded';
  runId: string;
  nodeId?: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
}

export interface DeadlineFiredEvent {
  type: 'deadline_fired';
  runId: string;
  deadline: 'approval' | 'execution';
  dueAt: string;
}

export interface WorkflowStateImportedEvent {
  type: 'workflow_state_imported';
  runId: string;
  state: JsonObject;
}

/**
 * A checkpoint of an agent framework (a LangGraph checkpoint saver) saved into the thread.
 * `data` is the saver's own record of it — opaque to the core, which keeps it in the log and
 * applies only `nodes`, the causal nodes the checkpoint's new messages became.
 */
export interface CheckpointSavedEvent {
  type: 'checkpoint_saved';
  checkpointId: string;
  parentCheckpointId?: string;
  data: JsonObject;
  nodes: RecordedNode[];
}

/** Intermediate writes of one task against a saved checkpoint (opaque `data`, as above). */
export interface CheckpointWritesSavedEvent {
  type: 'checkpoint_writes_saved';
  checkpointId: string;
  taskId: string;
  data: JsonObject;
  nodes: RecordedNode[];
}

/**
 * The saver's checkpoints before this entry no longer count (its `deleteThread`). The log keeps
 * them: the entries stay verifiable provenance; readers of checkpoints start after this one.
 */
export interface CheckpointsClearedEvent {
  type: 'checkpoints_cleared';
}

/**
 * Payloads withheld: each node keeps its id, edges and place, its payload (in the entry that
 * created it, and in the node's row) replaced by a tombstone (graph/tombstone.ts). `digest`, per
 * node: SHA-256 of the unsigned text of the entry that created it as it reads after this
 * redaction, which strict verification checks that entry against instead of its state hash.
 */
export interface NodesRedactedEvent {
  type: 'nodes_redacted';
  reason: string;
  /** Who asked (an API key id), when known. */
  actor?: string;
  nodes: { id: string; index: number; digest: string }[];
}

export type ThreadEvent =
  | ThreadCreatedEvent
  | StateImportedEvent
  | ThreadForkedEvent
  | NodesAppendedEvent
  | RunStartedEvent
  | RunActionDispatchedEvent
  | ApprovalResolvedEvent
  | RunCancelledEvent
  | UsageRecordedEvent
  | DeadlineFiredEvent
  | WorkflowStateImportedEvent
  | CheckpointSavedEvent
  | CheckpointWritesSavedEvent
  | CheckpointsClearedEvent
  | NodesRedactedEvent;

export type ThreadEventType = ThreadEvent['type'];

export const THREAD_EVENT_TYPES: readonly ThreadEventType[] = [
  'thread_created',
  'state_imported',
  'thread_forked',
  'nodes_appended',
  'run_started',
  'run_action_dispatched',
  'approval_resolved',
  'run_cancelled',
  'usage_recorded',
  'deadline_fired',
  'workflow_state_imported',
  'checkpoint_saved',
  'checkpoint_writes_saved',
  'checkpoints_cleared',
  'nodes_redacted',
];
