import {
  isSemanticResourceKey,
  normalizeSemanticKey,
  normalizeSemanticType,
  parseSemanticResourceKey,
} from './semantic.js';
import { childSeqs, countAtMost, type GraphState, headSeq, nodeAt, seqOf } from './store.js';
import type { CausalNode, MemoryFilter } from './types.js';

/*
 * Pure readers of a graph value. They only see sequences ≤ graph.count (see store.ts), return
 * frozen shared nodes and fresh arrays, and never change the graph.
 */

/** The node with this id, if it is part of this graph value. O(1). */
export function getNode(graph: GraphState, id: string): CausalNode | undefined {
  const seq = seqOf(graph, id);
  return seq === undefined ? undefined : nodeAt(graph, seq);
}

/** The node with this 1-based sequence. O(1). */
export function getNodeBySequence(graph: GraphState, sequence: number): CausalNode | undefined {
  return Number.isInteger(sequence) && sequence >= 1 && sequence <= graph.count
    ? nodeAt(graph, sequence)
    : undefined;
}

export const nodeCount = (graph: GraphState): number => graph.count;

/** Frontier ids in the order they became heads (imported order first). A copy. */
export const getFrontier = (graph: GraphState): string[] => [...graph.frontier];

export const isFrontier = (graph: GraphState, id: string): boolean => graph.frontier.includes(id);

/** Ids of the direct children of `id`, in sequence order. O(children + log n). */
export function getChildren(graph: GraphState, id: string): string[] {
  const seq = seqOf(graph, id);
  if (seq === undefined) return [];
  return childSeqs(graph, seq).map((child) => nodeAt(graph, child).id);
}

/** The current (newest) version of a resource key. O(log n). */
export function getResourceHead(graph: GraphState, key: string): CausalNode | undefined {
  const seq = headSeq(graph, key);
  return seq === undefined ? undefined : nodeAt(graph, seq);
}

/** The current head of every resource key (semantic keys included), in sequence order. */
export function getResourceHeads(graph: GraphState): CausalNode[] {
  const heads: CausalNode[] = [];
  for (const key of graph.store.resourceKeys) {
    const seq = headSeq(graph, key);
    if (seq !== undefined) heads.push(nodeAt(graph, seq));
  }
  return heads.sort((a, b) => a.sequence - b.sequence);
}

/** Every version of a resource key, oldest first. */
export function getResourceHistory(graph: GraphState, key: string): CausalNode[] {
  const list = graph.store.versions.get(key);
  if (!list) return [];
  const n = countAtMost(list, graph.count);
  return list.slice(0, n).map((seq) => nodeAt(graph, seq));
}

/** True for a node without resourceKey or the head of its key; false for unknown ids. */
export function isCurrent(graph: GraphState, id: string): boolean {
  const node = getNode(graph, id);
  if (!node) return false;
  return node.resourceKey === undefined || headSeq(graph, node.resourceKey) === node.sequence;
}

/** The previous version of the same resource key. */
export function getSupersedes(graph: GraphState, id: string): CausalNode | undefined {
  return versionNeighbour(graph, id, -1);
}

/** The next version of the same resource key, if this graph value has one. */
export function getSupersededBy(graph: GraphState, id: string): CausalNode | undefined {
  return versionNeighbour(graph, id, 1);
}

function versionNeighbour(graph: GraphState, id: string, step: 1 | -1): CausalNode | undefined {
  const node = getNode(graph, id);
  if (node?.resourceKey === undefined) return undefined;
  const list = graph.store.versions.get(node.resourceKey);
  const pos = graph.store.versionPos[node.sequence - 1];
  if (!list || pos === undefined || pos < 0) return undefined;
  const seq = list[pos + step];
  return seq !== undefined && seq <= graph.count ? nodeAt(graph, seq) : undefined;
}

/**
 * Current semantic heads (resource keys `semantic:<type>:<key>`), in sequence order, optionally
 * filtered by type and/or key. The filters are normalised like the writes are, so
 * `{type: 'Preference'}` finds `semantic:preference:*`; a filter that cannot be normalised
 * matches nothing.
 */
export function getMemory(graph: GraphState, filter: MemoryFilter = {}): CausalNode[] {
  const type = filter.type === undefined ? undefined : (normalizeSemanticType(filter.type) ?? null);
  const key = filter.key === undefined ? undefined : (normalizeSemanticKey(filter.key) ?? null);
  if (type === null || key === null) return [];
  return getResourceHeads(graph).filter((node) => {
    if (!isSemanticResourceKey(node.resourceKey)) return false;
    const parsed = parseSemanticResourceKey(node.resourceKey as string);
    if (!parsed) return type === undefined && key === undefined;
    return (
      (type === undefined || parsed.type === type) && (key === undefined || parsed.key === key)
    );
  });
}
