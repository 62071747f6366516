import {
  type CausalNode,
  type GraphState,
  getNodeBySequence,
  NODE_KINDS,
  nodeCount,
} from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import { computeNodeFacts, type FactsOf, type NodeFacts } from './facts.js';
import { countAtMost, lastAtMost } from './sorted.js';

/*
 * What the projection knows about a graph, whatever the query: node facts by sequence, the
 * versions of every equivalence key, node sequences by kind, topic members and a term → nodes
 * posting list. Kept the way the graph keeps its own storage (see graph/store.ts): one
 * append-only IndexStore shared by every graph value of one history, each value reading only the
 * sequences ≤ its count. A value that extends the store's history extends the store with its new
 * nodes (O(new nodes)); a value of another history (its node at the store's last sequence is a
 * different object) starts a store of its own. Whether two values share a history is decided by
 * node identity: a node object sits at the same sequence, after the same nodes, in every graph
 * value that holds it, because graph values share node objects only through their common prefix.
 * All of it is a cache: the answers are those of a fresh build.
 */

export interface TopicEntry {
  /** Member sequences, ascending. */
  readonly members: number[];
  /** Member ids in string order, and their sequences in the same order (built lazily). */
  sortedIds: string[] | undefined;
  sortedSeqs: number[] | undefined;
  /** Cluster id by member count (a prefix of `members`). */
  readonly ids: Map<number, string>;
}

export interface IndexStore {
  readonly nodes: CausalNode[];
  readonly facts: NodeFacts[];
  readonly keyVersions: Map<string, number[]>;
  /** Position of node s in its key's version list at s - 1; -1 without a key. */
  readonly keyPos: number[];
  /** At s: how many nodes ≤ s have an older equivalent (each makes one older node ineligible). */
  readonly supersedingPrefix: number[];
  readonly kindSeqs: Map<NodeKind, number[]>;
  /** In order of first appearance. */
  readonly topics: Map<string, TopicEntry>;
  readonly postings: Map<string, number[]>;
}

/** One graph value's view of an IndexStore. */
export interface GraphIndex {
  readonly graph: GraphState;
  readonly count: number;
  readonly store: IndexStore;
  /** Facts of the node with sequence s at s - 1 (read only up to `count`). */
  readonly facts: readonly NodeFacts[];
  readonly latestSystem: number | undefined;
  readonly latestGoal: number | undefined;
}

const stores = new WeakMap<CausalNode, IndexStore>();
const views = new WeakMap<GraphState, GraphIndex>();

export function getGraphIndex(graph: GraphState): GraphIndex {
  let view = views.get(graph);
  if (view === undefined) {
    const store = storeFor(graph);
    const count = nodeCount(graph);
    view = {
      graph,
      count,
      store,
      facts: store.facts,
      latestSystem: lastAtMost(store.kindSeqs.get('system'), count),
      latestGoal: lastAtMost(store.kindSeqs.get('goal'), count),
    };
    views.set(graph, view);
  }
  return view;
}

function storeFor(graph: GraphState): IndexStore {
  const count = nodeCount(graph);
  if (count === 0) return createStore();
  const first = nodeAtSeq(graph, 1);
  let store = stores.get(first);
  const shared = store === undefined ? 0 : Math.min(store.nodes.length, count);
  if (store === undefined || store.nodes[shared - 1] !== nodeAtSeq(graph, shared)) {
    store = createStore();
    stores.set(first, store);
  } else if (store.nodes.length > count) {
    return store;
  }
  extend(store, graph, count);
  return store;
}

function createStore(): IndexStore {
  return {
    nodes: [],
    facts: [],
    keyVersions: new Map(),
    keyPos: [],
    supersedingPrefix: [0],
    kindSeqs: new Map(),
    topics: new Map(),
    postings: new Map(),
  };
}

/** Appends the graph's nodes after the store's last one. O(new nodes × terms). */
function extend(store: IndexStore, graph: GraphState, count: number): void {
  const from = store.nodes.length + 1;
  if (count - from >= BULK_EXTENSION) {
    // Sorting again later is cheaper than inserting this many members one by one.
    for (const topic of store.topics.values()) {
      topic.sortedIds = undefined;
      topic.sortedSeqs = undefined;
    }
  }
  let superseding = store.supersedingPrefix[from - 1]!;
  const factsOf: FactsOf = (seq) => store.facts[seq - 1]!;
  let seq = from;
  const postings = store.postings;
  const terms = {
    add(term: string): void {
      const list = postings.get(term);
      if (list === undefined) postings.set(term, [seq]);
      else if (list[list.length - 1] !== seq) list.push(seq);
    },
  };
  for (; seq <= count; seq++) {
    const node = nodeAtSeq(graph, seq);
    const facts = computeNodeFacts(graph, node, factsOf, terms);
    store.nodes.push(node);
    store.facts.push(facts);
    if (facts.key === null) {
      store.keyPos.push(-1);
    } else {
      const versions = store.keyVersions.get(facts.key);
      if (versions === undefined) {
        store.keyPos.push(0);
        store.keyVersions.set(facts.key, [seq]);
      } else {
        store.keyPos.push(versions.length);
        versions.push(seq);
        superseding++;
      }
    }
    store.supersedingPrefix.push(superseding);
    push(store.kindSeqs, node.kind, seq);
    const topic = store.topics.get(facts.topic);
    if (topic === undefined) {
      store.topics.set(facts.topic, {
        members: [seq],
        sortedIds: undefined,
        sortedSeqs: undefined,
        ids: new Map(),
      });
    } else {
      topic.members.push(seq);
      if (topic.sortedIds !== undefined) insertSorted(topic, node.id, seq);
    }
  }
}

const BULK_EXTENSION = 256;

function push<K>(map: Map<K, number[]>, key: K, seq: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [seq]);
  else list.push(seq);
}

/** Keeps an already sorted member list sorted as one member is added. O(log n + n memmove). */
function insertSorted(topic: TopicEntry, id: string, seq: number): void {
  const ids = topic.sortedIds!;
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  ids.splice(lo, 0, id);
  topic.sortedSeqs!.splice(lo, 0, seq);
}

/** The node with sequence `seq`; the caller guarantees 1 ≤ seq ≤ nodeCount(graph). */
export const nodeAtSeq = (graph: GraphState, seq: number): CausalNode =>
  getNodeBySequence(graph, seq) as CausalNode;

/** True when no newer equivalent of the node with sequence `seq` exists in this graph value. */
export function isEligible(index: GraphIndex, seq: number): boolean {
  const pos = index.store.keyPos[seq - 1]!;
  if (pos < 0) return true;
  const next = index.store.keyVersions.get(index.facts[seq - 1]!.key!)![pos + 1];
  return next === undefined || next > index.count;
}

/** The newest equivalent of `seq` in this graph value (itself when eligible). */
export function newestEquivalent(index: GraphIndex, seq: number): number {
  const key = index.facts[seq - 1]!.key;
  if (key === null) return seq;
  return lastAtMost(index.store.keyVersions.get(key), index.count) ?? seq;
}

export const eligibleCount = (index: GraphIndex): number =>
  index.count - index.store.supersedingPrefix[index.count]!;

/** Node counts by kind, in NODE_KINDS order, zero counts left out. */
export function kindCounts(index: GraphIndex): [NodeKind, number][] {
  const out: [NodeKind, number][] = [];
  for (const kind of NODE_KINDS) {
    const n = countAtMost(index.store.kindSeqs.get(kind) ?? [], index.count);
    if (n > 0) out.push([kind, n]);
  }
  return out;
}

/** Sequences ≤ count of the nodes holding `term`, ascending (a shared list: do not change it). */
export function postingsOf(index: GraphIndex, term: string): readonly number[] {
  const list = index.store.postings.get(term);
  if (list === undefined) return [];
  const n = countAtMost(list, index.count);
  return n === list.length ? list : list.slice(0, n);
}
