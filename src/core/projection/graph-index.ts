import {
  type CausalNode,
  type GraphState,
  getNodeBySequence,
  NODE_KINDS,
  nodeCount,
} from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import { getNodeFacts, type NodeFacts } from './facts.js';

/**
 * What one graph value contributes to every projection of it, whatever the query: node facts by
 * sequence, which nodes are eligible (the newest of their equivalents), the latest system and
 * goal, kind counts and topic membership. Built in one pass over the nodes through the public
 * readers; memoised per graph value (graph values are immutable), so several projections of the
 * same state share it.
 */
export interface GraphIndex {
  readonly graph: GraphState;
  readonly count: number;
  /** Facts of the node with sequence s at index s - 1. */
  readonly facts: readonly NodeFacts[];
  /** For each equivalence key, the sequence of its newest node. */
  readonly newestByKey: ReadonlyMap<string, number>;
  readonly latestSystem: number | undefined;
  readonly latestGoal: number | undefined;
  readonly kindCounts: ReadonlyMap<NodeKind, number>;
  /** Topic → member sequences, ascending; topics in order of first appearance. */
  readonly topics: ReadonlyMap<string, number[]>;
  readonly eligibleCount: number;
}

const cache = new WeakMap<GraphState, GraphIndex>();

export function getGraphIndex(graph: GraphState): GraphIndex {
  let index = cache.get(graph);
  if (index === undefined) {
    index = buildIndex(graph);
    cache.set(graph, index);
  }
  return index;
}

function buildIndex(graph: GraphState): GraphIndex {
  const count = nodeCount(graph);
  const facts: NodeFacts[] = new Array(count);
  const newestByKey = new Map<string, number>();
  const kindTally = new Map<NodeKind, number>();
  const topics = new Map<string, number[]>();
  let latestSystem: number | undefined;
  let latestGoal: number | undefined;
  let keyed = 0;
  for (let seq = 1; seq <= count; seq++) {
    const node = nodeAtSeq(graph, seq);
    const nodeFacts = getNodeFacts(graph, node);
    facts[seq - 1] = nodeFacts;
    if (nodeFacts.key !== null) {
      if (newestByKey.has(nodeFacts.key)) keyed++;
      newestByKey.set(nodeFacts.key, seq);
    }
    kindTally.set(node.kind, (kindTally.get(node.kind) ?? 0) + 1);
    if (node.kind === 'system') latestSystem = seq;
    else if (node.kind === 'goal') latestGoal = seq;
    const members = topics.get(nodeFacts.topic);
    if (members === undefined) topics.set(nodeFacts.topic, [seq]);
    else members.push(seq);
  }
  const kindCounts = new Map<NodeKind, number>();
  for (const kind of NODE_KINDS) {
    const tally = kindTally.get(kind);
    if (tally !== undefined) kindCounts.set(kind, tally);
  }
  return {
    graph,
    count,
    facts,
    newestByKey,
    latestSystem,
    latestGoal,
    kindCounts,
    topics,
    eligibleCount: count - keyed,
  };
}

/** True when no newer equivalent of the node with sequence `seq` exists. */
export function isEligible(index: GraphIndex, seq: number): boolean {
  const key = (index.facts[seq - 1] as NodeFacts).key;
  return key === null || index.newestByKey.get(key) === seq;
}

/** The newest equivalent of `seq` (itself when eligible). */
export function newestEquivalent(index: GraphIndex, seq: number): number {
  const key = (index.facts[seq - 1] as NodeFacts).key;
  return key === null ? seq : (index.newestByKey.get(key) ?? seq);
}

/** The node with sequence `seq`; the caller guarantees 1 ≤ seq ≤ nodeCount(graph). */
export const nodeAtSeq = (graph: GraphState, seq: number): CausalNode =>
  getNodeBySequence(graph, seq) as CausalNode;
