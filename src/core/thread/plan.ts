import { err, ok, type Result } from '../errors.js';
import {
  type AgentState,
  createGraph,
  DEFAULT_IMPORT_LIMITS,
  type GraphState,
  type ImportLimits,
  importAgentStateSteps,
  type SemanticNodeType,
  type Steps,
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
  const event = importEvent(threadId, state, settings);
  if (!event.ok) return event;
  // Against the vocabulary the thread will have: its semantic nodes must be of those types.
  const valid = validateAgentState(state, undefined, event.value.config);
  if (!valid.ok) return err(valid.error);
  return ok(event.value.event);
}

/** The `state_imported` event of `state`, unchecked, and the thread's resolved vocabulary. */
function importEvent(threadId: string, state: unknown, settings: ThreadSettings) {
  const graph = createGraph(graphConfig(settings));
  if (!graph.ok) return graph;
  const { config } = graph.value;
  const event: StateImportedEvent = {
    type: 'state_imported',
    threadId,
    metadata: settings.metadata ?? null,
    nodeTypes: config.nodeTypes,
    allowDynamicNodeTypes: config.allowDynamicNodeTypes,
    state: state as AgentState,
  };
  return ok({ event, config });
}

/** A `state_imported` event with the graph its state becomes, checked once. */
export interface PreparedImport {
  event: StateImportedEvent;
  /** For `ThreadMachineOptions.importedGraph`, so applying the event does not check it again. */
  importedGraph: { state: AgentState; graph: GraphState };
}

/**
 * `planImportState` in steps (see `Steps`), also building the graph the state becomes: the
 * import rules run once, under the stricter of the planning limits and `limits` (those applying
 * the entry uses), and `commitEvent` given `importedGraph` does not run them again. Pure.
 */
export function* prepareImportState(
  threadId: string,
  state: unknown,
  settings: ThreadSettings,
  limits: ImportLimits = {},
): Steps<Result<PreparedImport>> {
  const planned = importEvent(threadId, state, settings);
  if (!planned.ok) return planned;
  const { event, config } = planned.value;
  const graph = yield* importAgentStateSteps(state, config, strictest(limits));
  if (!graph.ok) return graph;
  return ok({ event, importedGraph: { state: event.state, graph: graph.value } });
}

/** Each import limit at the lower of its default (what planning checks) and `limits`. */
function strictest(limits: ImportLimits): Required<ImportLimits> {
  const lower = (key: keyof ImportLimits) =>
    Math.min(DEFAULT_IMPORT_LIMITS[key], limits[key] ?? DEFAULT_IMPORT_LIMITS[key]);
  return {
    maxBytes: lower('maxBytes'),
    maxNodes: lower('maxNodes'),
    maxPayloadBytes: lower('maxPayloadBytes'),
  };
}

function graphConfig(settings: ThreadSettings) {
  return {
    ...(settings.nodeTypes === undefined ? {} : { nodeTypes: settings.nodeTypes }),
    ...(settings.allowDynamicNodeTypes === undefined
      ? {}
      : { allowDynamicNodeTypes: settings.allowDynamicNodeTypes }),
  };
}
