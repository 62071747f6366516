import { err, ok, type Result } from '../errors.js';
import {
  type AgentState,
  createGraph,
  type SemanticNodeType,
  validateAgentState,
} from '../graph/index.js';
import type { JsonValue } from '../json.js';
import type { StateImportedEvent, ThreadCreatedEvent } from './events.js';

/**
 * Planning: turn a command's input into the event that records it. Pure. Planning resolves
 * everything replay must not recompute from the outside (default parents, semantic keys, the
 * memory keys an action wrote); `commitEvent` then applies the event, which re-checks it.
 */

export {
  type NodeInput,
  planAppendNodes,
  planRemember,
  type RememberInput,
} from './plan-nodes.js';
export {
  type DispatchInput,
  dueDeadlines,
  planCancelRun,
  planDispatch,
  planImportWorkflowState,
  planRecordUsage,
  planResolveApproval,
  planStartRun,
  type ResolveApprovalInput,
  type StartRunInput,
} from './plan-runs.js';

export interface ThreadSettings {
  metadata?: JsonValue;
  nodeTypes?: SemanticNodeType[];
  allowDynamicNodeTypes?: boolean;
}

export function planCreateThread(
  threadId: string,
  settings: ThreadSettings,
): Result<ThreadCreatedEvent> {
  const graph = createGraph(graphConfig(settings));
  if (!graph.ok) return graph;
  return ok({
    type: 'thread_created',
    threadId,
    metadata: settings.metadata ?? null,
    nodeTypes: graph.value.config.nodeTypes,
    allowDynamicNodeTypes: graph.value.config.allowDynamicNodeTypes,
  });
}

export function planImportState(
  threadId: string,
  state: unknown,
  settings: ThreadSettings,
): Result<StateImportedEvent> {
  const graph = createGraph(graphConfig(settings));
  if (!graph.ok) return graph;
  // Against the vocabulary the thread will have: its semantic nodes must be of those types.
  const valid = validateAgentState(state, undefined, graph.value.config);
  if (!valid.ok) return err(valid.error);
  return ok({
    type: 'state_imported',
    threadId,
    metadata: settings.metadata ?? null,
    nodeTypes: graph.value.config.nodeTypes,
    allowDynamicNodeTypes: graph.value.config.allowDynamicNodeTypes,
    state: state as AgentState,
  });
}

function graphConfig(settings: ThreadSettings) {
  return {
    ...(settings.nodeTypes === undefined ? {} : { nodeTypes: settings.nodeTypes }),
    ...(settings.allowDynamicNodeTypes === undefined
      ? {}
      : { allowDynamicNodeTypes: settings.allowDynamicNodeTypes }),
  };
}
