import {
  type CausalNode,
  type GraphState,
  getNodeBySequence,
  NODE_KINDS,
  nodeCount,
} from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import { AUTHORITY, computeNodeFacts, type FactsOf, type NodeFacts } from './facts.js';
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
  /**
   * While every member id is ASCII of one length: the sorted ids as the bytes their cluster id
   * hashes, each followed by `\n` (`stride` bytes an id), kept in step with `sortedIds`, so a
   * changed cluster's id costs one SHA-256 pass and no string building (clusters.ts).
   */
  bytes: Uint8Array | undefined;
  stride: number;
  /** Cluster id by member count (a prefix of `members`). */
  readonly ids: Map<number, string>;
}

export interface IndexStore {
  readonly nodes: CausalNode[];
  readonly facts: NodeFacts[];
  readonly keyVersions: Map<string, number[]>;
  /** Sequence of the next node with the same key at s - 1; 0 when none (yet). */
  readonly nextEquivalent: number[];
  /** AUTHORITY of the node's kind at s - 1 (read per candidate when scoring). */
  readonly authority: number[];
  /** At s: how many nodes ≤ s have an older equivalent (each makes one older node ineligible). */
  readonly supersedingPrefix: number[];
  readonly kindSeqs: Map<NodeKind, number[]>;
  /** In order of first appearance. */
  readonly topics: Map<string, TopicEntry>;
  readonly postings: Map<string, number[]>;
  /** Per-query work space (select.ts getScores); all zero when not claimed. */
  scratch: ScoreScratch | undefined;
}

/**
 * Hit counters by sequence and the list of sequences with a hit, sized for the store: claimed by
 * one scoring at a time and zeroed again on release, so a projection of a large graph does not
 * allocate (and page in) arrays of its size on every call.
 */
export interface ScoreScratch {
  readonly q: Uint16Array;
  readonly g: Uint16Array;
  readonly hits: Int32Array;
  busy: boolean;
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
    nextEquivalent: [],
    authority: [],
    supersedingPrefix: [0],
    kindSeqs: new Map(),
    topics: new Map(),
    postings: new Map(),
    scratch: undefined,
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
      topic.bytes = undefined;
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
    store.nextEquivalent.push(0);
    store.authority.push(AUTHORITY[node.kind]);
    if (facts.key !== null) {
      const versions = store.keyVersions.get(facts.key);
      if (versions === undefined) {
        store.keyVersions.set(facts.key, [seq]);
      } else {
        store.nextEquivalent[versions[versions.length - 1]! - 1] = seq;
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
        bytes: undefined,
        stride: 0,
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
  if (topic.bytes !== undefined) insertBytes(topic, lo, id);
}

/** The sorted ids of a topic as bytes (see TopicEntry), or undefined when they are not uniform. */
export function idBytes(ids: readonly string[]): { bytes: Uint8Array; stride: number } | undefined {
  const width = ids[0]?.length ?? 0;
  if (width === 0) return undefined;
  const stride = width + 1;
  const bytes = new Uint8Array(Math.max(64, ids.length * 2) * stride);
  for (let i = 0; i < ids.length; i++) {
    if (!writeId(bytes, i * stride, ids[i]!, width)) return undefined;
  }
  return { bytes, stride };
}

/** Writes `id` and `\n` at `at`; false when it is not ASCII of length `width`. */
function writeId(bytes: Uint8Array, at: number, id: string, width: number): boolean {
  if (id.length !== width) return false;
  for (let j = 0; j < width; j++) {
    const code = id.charCodeAt(j);
    if (code > 0x7f) return false;
    bytes[at + j] = code;
  }
  bytes[at + width] = 0x0a;
  return true;
}

/** Inserts `id` as the `position`-th id of the topic's bytes (they still hold the others). */
function insertBytes(topic: TopicEntry, position: number, id: string): void {
  const { stride } = topic;
  const used = (topic.sortedIds!.length - 1) * stride;
  let bytes = topic.bytes!;
  if (used + stride > bytes.length) {
    const grown = new Uint8Array(Math.max(2 * bytes.length, used + stride));
    grown.set(bytes.subarray(0, used));
    bytes = grown;
  }
  const at = position * stride;
  bytes.copyWithin(at + stride, at, used);
  topic.bytes = writeId(bytes, at, id, stride - 1) ? bytes : undefined;
}

/** The node with sequence `seq`; the caller guarantees 1 ≤ seq ≤ nodeCount(graph). */
export const nodeAtSeq = (graph: GraphState, seq: number): CausalNode =>
  getNodeBySequence(graph, seq) as CausalNode;

/** True when no newer equivalent of the node with sequence `seq` exists in this graph value. */
export function isEligible(index: GraphIndex, seq: number): boolean {
  const next = index.store.nextEquivalent[seq - 1]!;
  return next === 0 || next > index.count;
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
