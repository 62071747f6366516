import { type GraphState, type NodeSalt, type SemanticNodeType, withSalt } from '../graph/index.js';
import type { JsonValue } from '../json.js';
import { GENESIS_STATE_HASH } from '../log/index.js';
import type { WorkflowState } from '../run/index.js';
import type { NodeTaint, NodeUsage } from './events.js';
import { RunMap } from './run-map.js';
import { emptyVec, type Vec } from './vec.js';

export interface ThreadConfig {
  threadId: string;
  createdAt: string;
  metadata: JsonValue;
  nodeTypes: SemanticNodeType[];
  allowDynamicNodeTypes: boolean;
  forkedFrom?: { threadId: string; upToIndex: number };
}

/** What the thread knows about a node beyond its content: where and why it was written. */
export interface NodeMeta {
  logIndex: number;
  runId?: string;
  /** Own taint, or taint derived from a tainted ancestor. */
  taint?: NodeTaint;
  usage?: NodeUsage;
}

export interface ThreadSpend {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  calls: number;
}

export const ZERO_SPEND: ThreadSpend = { inputTokens: 0, outputTokens: 0, costUsd: 0, calls: 0 };

/**
 * The derived state of one thread after a prefix of its log. A persistent value: applying an
 * entry returns a new state and leaves this one answering exactly as before.
 */
export interface ThreadState {
  /** Null until the first entry (thread_created / state_imported) is applied. */
  config: ThreadConfig | null;
  graph: GraphState;
  /** Node metadata by `sequence - 1`. */
  nodeMeta: Vec<NodeMeta>;
  runs: ReadonlyMap<string, WorkflowState>;
  /** Run ids in start order. */
  runOrder: readonly string[];
  spend: ThreadSpend;
  /** The newest `system` node: a run's goal node takes it as a parent. */
  latestSystemNodeId?: string;
  /** Number of entries applied: the next expected index. */
  length: number;
  /** verification.stateHash after the last applied entry. */
  stateHash: string;
}

/**
 * `state` as a salted thread's commands plan on (graph/salt.ts): the nodes they append carry the
 * salt field. For planning only; the committed state is the plain one. Pure.
 */
export const withPayloadSalt = (state: ThreadState, salt: NodeSalt): ThreadState => ({
  ...state,
  graph: withSalt(state.graph, salt),
});

export function createEmptyThreadState(graph: GraphState): ThreadState {
  return {
    config: null,
    graph,
    nodeMeta: emptyVec(),
    runs: RunMap.empty(),
    runOrder: [],
    spend: ZERO_SPEND,
    length: 0,
    stateHash: GENESIS_STATE_HASH,
  };
}

/**
 * A fresh copy of `state` to finish in place, with `latestSystemNodeId` replaced when given.
 * Every thread state is built here or by createEmptyThreadState, keys in one order, so the
 * states a replay makes share two hidden classes (with and without `latestSystemNodeId`)
 * instead of the many that spreads and late property adds produce. Internal to the core.
 */
export function copyThreadState(
  state: ThreadState,
  latestSystemNodeId: string | undefined = state.latestSystemNodeId,
): ThreadState {
  const { config, graph, nodeMeta, runs, runOrder, spend, length, stateHash } = state;
  return latestSystemNodeId === undefined
    ? { config, graph, nodeMeta, runs, runOrder, spend, length, stateHash }
    : { config, graph, nodeMeta, runs, runOrder, spend, latestSystemNodeId, length, stateHash };
}
