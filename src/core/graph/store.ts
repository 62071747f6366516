import type { CausalNode, GraphConfig } from './types.js';

/*
 * Persistence without copying: how a GraphState stays an immutable value while append costs
 * O(parents + log n).
 *
 * Every graph value points at a shared, append-only `GraphStore` (nodes by sequence, id →
 * sequence, children lists, per-resourceKey version lists) and carries its own `count`. Readers
 * only ever look at entries whose sequence is ≤ count, so entries appended later by a descendant
 * value are invisible to the older one. Appending from the value whose count equals the store's
 * length simply pushes onto the shared store. Appending from an older value (a branch: its count
 * is behind the store's length) first clones the store truncated to that count
 * (copy-on-divergence), so the two histories never see each other's nodes. The frontier is
 * small and is kept per value as a frozen array, copied on each append.
 *
 * Invariants the readers rely on: sequences in children lists and version lists are ascending
 * (a node's parents and predecessors always precede it), and nodes are frozen.
 */
export interface GraphStore {
  /** Node with sequence s lives at index s - 1. */
  readonly nodes: CausalNode[];
  readonly seqById: Map<string, number>;
  /**
   * Sequences of the children of the node with sequence s, at index s - 1 (ascending): a lone
   * child is stored as its number (most nodes have one), more as a list. Read via `childSeqs`.
   */
  readonly children: (number | number[] | undefined)[];
  /** Sequences of the versions of each resource key (ascending). */
  readonly versions: Map<string, number[]>;
  /** Index of the node in its key's version list, -1 without resourceKey; index s - 1. */
  readonly versionPos: number[];
  /** Resource keys in the order their first version appeared. */
  readonly resourceKeys: string[];
}

/**
 * An immutable causal graph value. Read it through the `get*`/`is*`/`walk*` readers; `store` is
 * shared with other values and must never be touched directly.
 */
export interface GraphState {
  readonly config: Readonly<GraphConfig>;
  /** Number of nodes of this value (sequences 1..count). */
  readonly count: number;
  /** Frontier ids, in the order they became heads (imported order first). Frozen. */
  readonly frontier: readonly string[];
  /** @internal shared append-only storage; see the note at the top of store.ts. */
  readonly store: GraphStore;
}

/** An empty store; an import passes the id → sequence map it already built while validating. */
export function createStore(seqById: Map<string, number> = new Map()): GraphStore {
  return {
    nodes: [],
    seqById,
    children: [],
    versions: new Map(),
    versionPos: [],
    resourceKeys: [],
  };
}

export function makeGraph(
  config: Readonly<GraphConfig>,
  store: GraphStore,
  count: number,
  frontier: readonly string[],
): GraphState {
  return Object.freeze({ config, count, frontier: Object.freeze(frontier), store });
}

/** Freezes a node and its parents (its payload must already be a frozen copy). */
export function freezeNode(node: CausalNode): CausalNode {
  Object.freeze(node.parents);
  return Object.freeze(node);
}

/**
 * Adds a frozen node whose parents are already in the store. O(parents). `parentSeqs`, when the
 * caller already looked them up, are the sequences of `node.parents` in the same order.
 */
export function pushNode(
  store: GraphStore,
  node: CausalNode,
  parentSeqs?: readonly number[],
): void {
  const seq = store.nodes.length + 1;
  store.nodes.push(node);
  store.seqById.set(node.id, seq);
  store.children.push(undefined);
  const { parents } = node;
  for (let i = 0; i < parents.length; i++) {
    const parentSeq = parentSeqs === undefined ? store.seqById.get(parents[i]!) : parentSeqs[i];
    if (parentSeq === undefined) continue;
    const children = store.children[parentSeq - 1];
    if (children === undefined) store.children[parentSeq - 1] = seq;
    else if (typeof children === 'number') store.children[parentSeq - 1] = [children, seq];
    else children.push(seq);
  }
  if (node.resourceKey === undefined) {
    store.versionPos.push(-1);
    return;
  }
  const versions = store.versions.get(node.resourceKey);
  if (versions) {
    store.versionPos.push(versions.length);
    versions.push(seq);
  } else {
    store.versionPos.push(0);
    store.versions.set(node.resourceKey, [seq]);
    store.resourceKeys.push(node.resourceKey);
  }
}

/** A private copy of the first `count` nodes' worth of the store. O(n); used only on a branch. */
export function cloneStore(store: GraphStore, count: number): GraphStore {
  const seqById = new Map<string, number>();
  for (const [id, seq] of store.seqById) if (seq <= count) seqById.set(id, seq);
  const versions = new Map<string, number[]>();
  const resourceKeys: string[] = [];
  for (const key of store.resourceKeys) {
    const list = store.versions.get(key) ?? [];
    const kept = list.slice(0, countAtMost(list, count));
    if (kept.length > 0) {
      versions.set(key, kept);
      resourceKeys.push(key);
    }
  }
  return {
    nodes: store.nodes.slice(0, count),
    seqById,
    children: store.children.slice(0, count).map((children) => {
      if (typeof children === 'number') return children <= count ? children : undefined;
      if (!children) return undefined;
      const kept = children.slice(0, countAtMost(children, count));
      return kept.length > 1 ? kept : kept[0];
    }),
    versions,
    versionPos: store.versionPos.slice(0, count),
    resourceKeys,
  };
}

/** How many entries of an ascending list are ≤ limit. O(log n), O(1) in the common case. */
export function countAtMost(list: readonly number[], limit: number): number {
  const last = list[list.length - 1];
  if (last === undefined || last <= limit) return list.length;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) <= limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The sequences of the children of the node `seq` that are visible in `graph`, ascending. */
export function childSeqs(graph: GraphState, seq: number): readonly number[] {
  const children = graph.store.children[seq - 1];
  if (children === undefined) return NO_SEQS;
  if (typeof children === 'number') return children <= graph.count ? [children] : NO_SEQS;
  const n = countAtMost(children, graph.count);
  return n === children.length ? children : children.slice(0, n);
}

const NO_SEQS: readonly number[] = Object.freeze([]);

/**
 * The sequence of `id` if it is visible in `graph`. The newest nodes are checked first: they are
 * what new nodes name as parents (the frontier) and are in cache, whereas a lookup in a large
 * id map costs several cache misses.
 */
export function seqOf(graph: GraphState, id: string): number | undefined {
  const { nodes } = graph.store;
  const stop = graph.count > RECENT_NODES ? graph.count - RECENT_NODES : 0;
  for (let seq = graph.count; seq > stop; seq--) {
    if ((nodes[seq - 1] as CausalNode).id === id) return seq;
  }
  const seq = graph.store.seqById.get(id);
  return seq !== undefined && seq <= graph.count ? seq : undefined;
}

/** How many of the newest nodes `seqOf` compares before it looks in the id map. */
const RECENT_NODES = 4;

/** The node with sequence `seq`; the caller guarantees 1 ≤ seq ≤ graph.count. */
export const nodeAt = (graph: GraphState, seq: number): CausalNode =>
  graph.store.nodes[seq - 1] as CausalNode;

/** The sequence of the current head of `key` in `graph`, if the key exists there. */
export function headSeq(graph: GraphState, key: string): number | undefined {
  const list = graph.store.versions.get(key);
  if (!list) return undefined;
  const n = countAtMost(list, graph.count);
  return n > 0 ? list[n - 1] : undefined;
}
