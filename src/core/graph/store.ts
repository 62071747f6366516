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
  /** Id → sequence of every node in `nodes`. */
  readonly ids: IdIndex;
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
/**
 * The salt of a node from its identity text without the salt (kind, resolved parents, payload,
 * resource key) and the sequence it would take: a keyed digest the engine computes over the
 * thread's secret. The sequence is part of it so that no append can learn whether some content
 * is already in the thread (or was, before a redaction): content sent again is a new node.
 */
export type NodeSalt = (identityText: string, sequence: number) => string;

export interface GraphState {
  readonly config: Readonly<GraphConfig>;
  /** Number of nodes of this value (sequences 1..count). */
  readonly count: number;
  /** Frontier ids, in the order they became heads (imported order first). Frozen. */
  readonly frontier: readonly string[];
  /** @internal shared append-only storage; see the note at the top of store.ts. */
  readonly store: GraphStore;
  /** Set only on a planning view of a salted thread (salt.ts): appends salt new nodes. */
  readonly salt?: NodeSalt;
}

/** An empty store, with room for `expected` nodes before its id index grows. */
export function createStore(expected = 0): GraphStore {
  return {
    nodes: [],
    ids: new IdIndex(expected),
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
  store.ids.add(node.id, seq);
  store.children.push(undefined);
  const { parents } = node;
  for (let i = 0; i < parents.length; i++) {
    const parentSeq =
      parentSeqs === undefined ? store.ids.get(store.nodes, parents[i]!) : parentSeqs[i];
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
    ids: store.ids.truncated(count),
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
  const seq = graph.store.ids.get(nodes, id);
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

/**
 * Id → sequence for the nodes of one store: open addressing with linear probing over one
 * Int32Array of (32-bit hash of the id, sequence) pairs, side by side so a probe touches one
 * cache line; sequence 0 marks a free slot. An id is compared (with the node's, read from the
 * store) only where the hashes match, so a miss — every new node asks whether its id exists —
 * costs a probe of adjacent slots instead of the several cache misses of a large Map, and the
 * index lives outside the JS heap, where the GC never walks it. Ids are added once each (the
 * store's ids are unique); the table doubles at half full.
 */
export class IdIndex {
  /** Slot i is (slots[2i], slots[2i + 1]) = (hash, sequence). */
  private slots: Int32Array;
  private mask: number;
  private size = 0;

  constructor(expected = 0) {
    let capacity = MIN_ID_SLOTS;
    while (capacity < expected * 2) capacity *= 2;
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
  }

  /** The sequence of `id` among `nodes` (the store's nodes), if present. */
  get(nodes: readonly CausalNode[], id: string): number | undefined {
    const hash = hashId(id);
    const { slots, mask } = this;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const seq = slots[2 * slot + 1] as number;
      if (seq === 0) return undefined;
      if (slots[2 * slot] === hash && (nodes[seq - 1] as CausalNode).id === id) return seq;
    }
  }

  /** Records `id` at `seq`; the caller guarantees the id is not in the index yet. */
  add(id: string, seq: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    this.place(hashId(id), seq);
    this.size++;
  }

  /** A new index with only the entries of sequences ≤ count. O(capacity). */
  truncated(count: number): IdIndex {
    const out = new IdIndex(count);
    const { slots } = this;
    for (let i = 0; i < slots.length; i += 2) {
      const seq = slots[i + 1] as number;
      if (seq !== 0 && seq <= count) {
        out.place(slots[i] as number, seq);
        out.size++;
      }
    }
    return out;
  }

  private place(hash: number, seq: number): void {
    const { slots, mask } = this;
    let slot = hash & mask;
    while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = seq;
  }

  private grow(): void {
    const { slots } = this;
    const capacity = (this.mask + 1) * 2;
    this.slots = new Int32Array(capacity * 2);
    this.mask = capacity - 1;
    for (let i = 0; i < slots.length; i += 2) {
      const seq = slots[i + 1] as number;
      if (seq !== 0) this.place(slots[i] as number, seq);
    }
  }
}

const MIN_ID_SLOTS = 16;

/** FNV-1a over the UTF-16 code units of `id`, with a final avalanche so low bits spread. */
function hashId(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash | 0;
}
