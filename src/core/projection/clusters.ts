import { createHash } from 'node:crypto';
import { getChildren, getNode } from '../graph/index.js';
import { sha256Hex } from '../hash.js';
import { type GraphIndex, idBytes, isEligible, nodeAtSeq, type TopicEntry } from './graph-index.js';
import { countAtMost } from './sorted.js';
import type { ClusterPin, PeripheralCluster } from './types.js';

/*
 * Deterministic topic clusters: every node belongs to the cluster of its topic (see
 * facts.ts). A cluster's id is `cl_` + the first 16 hex of SHA-256 over its member ids, sorted
 * with the default string order and joined by `\n`, so the id names the member set whatever order
 * the members were appended in. The graph fingerprint is SHA-256 over the sorted cluster ids:
 * it covers every node id of the graph.
 */

export interface Cluster extends ClusterPin {
  /** Member sequences, ascending. */
  members: readonly number[];
}

export interface ClusterIndex {
  /** In order of first appearance. */
  clusters: readonly Cluster[];
  byTopic: ReadonlyMap<string, Cluster>;
  /** Largest first, then by label. */
  bySize: readonly Cluster[];
  fingerprint: string;
}

const cache = new WeakMap<GraphIndex, ClusterIndex>();

export function getClusterIndex(index: GraphIndex): ClusterIndex {
  let clusters = cache.get(index);
  if (clusters === undefined) {
    clusters = buildClusters(index);
    cache.set(index, clusters);
  }
  return clusters;
}

function buildClusters(index: GraphIndex): ClusterIndex {
  const clusters: Cluster[] = [];
  const byTopic = new Map<string, Cluster>();
  for (const [topic, entry] of index.store.topics) {
    const size = countAtMost(entry.members, index.count);
    if (size === 0) continue;
    const cluster: Cluster = {
      id: topicClusterId(index, entry, size),
      label: topic,
      size,
      firstSequence: entry.members[0]!,
      lastSequence: entry.members[size - 1]!,
      members: size === entry.members.length ? entry.members : entry.members.slice(0, size),
    };
    clusters.push(cluster);
    byTopic.set(topic, cluster);
  }
  const bySize = [...clusters].sort(
    (a, b) => b.size - a.size || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
  );
  const fingerprint = sha256Hex(
    clusters
      .map((c) => c.id)
      .sort()
      .join('\n'),
  ).slice(0, 16);
  return { clusters, byTopic, bySize, fingerprint };
}

/** Ids per topic and member count are kept, and the sorted member list maintained, in the store. */
const MAX_CACHED_IDS = 32;

function topicClusterId(index: GraphIndex, entry: TopicEntry, size: number): string {
  const cached = entry.ids.get(size);
  if (cached !== undefined) return cached;
  const { nodes } = index.store;
  if (entry.sortedIds === undefined || entry.sortedSeqs === undefined) {
    const ids = entry.members.map((seq) => nodes[seq - 1]!.id);
    const seqById = new Map(ids.map((id, i) => [id, entry.members[i]!]));
    entry.sortedIds = sortIds(ids);
    entry.sortedSeqs = entry.sortedIds.map((id) => seqById.get(id)!);
    const bytes = idBytes(entry.sortedIds);
    entry.bytes = bytes?.bytes;
    entry.stride = bytes?.stride ?? 0;
  }
  const { sortedIds, sortedSeqs, bytes } = entry;
  let digest: string;
  if (size === entry.members.length && bytes !== undefined) {
    // The bytes hold every member, each followed by `\n`: all but the last `\n` are hashed.
    digest = createHash('sha256')
      .update(bytes.subarray(0, size * entry.stride - 1))
      .digest('hex');
  } else {
    const members =
      size === entry.members.length
        ? sortedIds
        : sortedIds.filter((_, i) => sortedSeqs[i]! <= index.count);
    digest = sha256OfLines(members);
  }
  const id = 'cl_' + digest.slice(0, 16);
  if (entry.ids.size >= MAX_CACHED_IDS) entry.ids.clear();
  entry.ids.set(size, id);
  return id;
}

/** Lines joined per chunk of this many: no string of a whole large cluster is built. */
const HASH_CHUNK = 512;

/** `sha256Hex(lines.join('\n'))`, hashing the UTF-8 text in chunks of whole lines. */
function sha256OfLines(lines: readonly string[]): string {
  if (lines.length <= HASH_CHUNK) return sha256Hex(lines.join('\n'));
  const hash = createHash('sha256');
  for (let i = 0; i < lines.length; i += HASH_CHUNK) {
    const chunk = lines.slice(i, i + HASH_CHUNK).join('\n');
    hash.update(i === 0 ? chunk : '\n' + chunk, 'utf8');
  }
  return hash.digest('hex');
}

export function clusterId(ids: readonly string[]): string {
  return 'cl_' + sha256Hex(sortIds(ids).join('\n')).slice(0, 16);
}

const CONTENT_ID = /^cw_[0-9a-f]{24}$/;
/** 2^21: sequence numbers packed below a 32-bit id prefix stay exact in a float64. */
const INDEX_SPAN = 2_097_152;

/**
 * `[...ids].sort()`, fast for content ids (`cw_` + 24 lowercase hex, where string order is the
 * order of the hex value): sorts their 32-bit prefixes packed with positions in a Float64Array,
 * then orders runs with an equal prefix by the full string.
 */
export function sortIds(ids: readonly string[]): string[] {
  const n = ids.length;
  if (n >= INDEX_SPAN || !ids.every((id) => CONTENT_ID.test(id))) return [...ids].sort();
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    keys[i] = Number.parseInt((ids[i] as string).slice(3, 11), 16) * INDEX_SPAN + i;
  }
  keys.sort();
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = ids[(keys[i] as number) % INDEX_SPAN] as string;
  let start = 0;
  for (let i = 1; i <= n; i++) {
    if (i < n && Math.floor(keys[i]! / INDEX_SPAN) === Math.floor(keys[start]! / INDEX_SPAN)) {
      continue;
    }
    if (i - start > 1) {
      const run = out.slice(start, i).sort();
      for (let j = 0; j < run.length; j++) out[start + j] = run[j]!;
    }
    start = i;
  }
  return out;
}

/** Parents and children of each active node that are considered, per active node. */
export const NEIGHBOUR_LIMIT = 64;

/**
 * Clusters next to the active work (the frontier heads and the latest goal): for each, how many
 * eligible parents and children of the active nodes it holds that are not in the mandatory set,
 * and the newest of them. Most neighbours first, then the newest neighbour, then the label.
 */
export function peripheralClusters(
  index: GraphIndex,
  clusters: ClusterIndex,
  active: readonly number[],
  mandatory: ReadonlySet<number>,
): PeripheralCluster[] {
  const { graph } = index;
  const seen = new Set<number>();
  const tally = new Map<string, { near: number; newest: number }>();
  for (const seq of active) {
    const node = nodeAtSeq(graph, seq);
    const children = getChildren(graph, node.id);
    const neighbours = [
      ...node.parents,
      ...children.slice(Math.max(0, children.length - NEIGHBOUR_LIMIT)),
    ].slice(0, NEIGHBOUR_LIMIT);
    for (const id of neighbours) {
      const neighbour = getNode(graph, id);
      if (neighbour === undefined) continue;
      const n = neighbour.sequence;
      if (seen.has(n) || mandatory.has(n) || !isEligible(index, n)) continue;
      seen.add(n);
      const topic = index.facts[n - 1]!.topic;
      const entry = tally.get(topic);
      if (entry === undefined) tally.set(topic, { near: 1, newest: n });
      else {
        entry.near++;
        if (n > entry.newest) entry.newest = n;
      }
    }
  }
  const out: PeripheralCluster[] = [];
  for (const [topic, { near, newest }] of tally) {
    const cluster = clusters.byTopic.get(topic)!;
    out.push({
      id: cluster.id,
      label: cluster.label,
      size: cluster.size,
      firstSequence: cluster.firstSequence,
      lastSequence: cluster.lastSequence,
      near,
      nearestId: nodeAtSeq(graph, newest).id,
    });
  }
  const newestOf = (c: PeripheralCluster) => getNode(graph, c.nearestId)!.sequence;
  return out.sort(
    (a, b) =>
      b.near - a.near ||
      newestOf(b) - newestOf(a) ||
      (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
  );
}

export const toPin = (cluster: Cluster): ClusterPin => ({
  id: cluster.id,
  label: cluster.label,
  size: cluster.size,
  firstSequence: cluster.firstSequence,
  lastSequence: cluster.lastSequence,
});
