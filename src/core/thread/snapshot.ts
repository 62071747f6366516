/**
 * Thread snapshots: a ThreadState after a prefix of its log, as canonical JSON text, for
 * time travel without replaying the whole prefix (DESIGN §2.1: snapshots are caches).
 *
 * What a snapshot holds: everything of the state that an entry can change in place — the thread
 * config, the runs, the spend, the frontier, the latest system node, the log length and state
 * hash — plus the number of nodes and the id of the last one. It does NOT hold the nodes or
 * their metadata: both are append-only (an entry only ever adds nodes, at the end), so the nodes
 * of the state after `n` entries are exactly the first `count` nodes of any later state of the
 * same log. A snapshot is restored onto such a later state (`base`, e.g. the engine's latest
 * state of the thread), sharing its node storage the way every older graph value does: O(size
 * of the runs), not O(nodes). The graph's readers only ever look at its first `count` nodes, and
 * appending to it copies the storage first (copy-on-divergence), so the base is never affected.
 *
 * A snapshot is never trusted blindly: `restoreThreadSnapshot` checks the format, the shape, and
 * that the base really extends it (enough nodes, the same last node id, the same thread and node
 * vocabulary); the caller also checks the snapshot's state hash against the log entry it claims
 * to follow, and the replay of the tail checks every later entry's hash. Pure.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result, type WeftError } from '../errors.js';
import { getNode, getNodeBySequence } from '../graph/index.js';
// Internals of the graph's storage: a restored graph is a value over shared (or copied) storage.
import { cloneStore, makeGraph } from '../graph/store.js';
import type { WorkflowState } from '../run/index.js';
import type { NodeMeta, ThreadConfig, ThreadSpend, ThreadState } from './state.js';
import type { Vec } from './vec.js';

/** The `format` field of every snapshot this build writes and reads. */
export const THREAD_SNAPSHOT_FORMAT = 'weft.thread-snapshot/1';

/** The parsed form of a snapshot (see the module comment for what it leaves out). */
export interface ThreadSnapshot {
  format: typeof THREAD_SNAPSHOT_FORMAT;
  /** Log length the state is as of: the snapshot follows entry `length - 1`. */
  length: number;
  /** verification.stateHash of entry `length - 1`. */
  stateHash: string;
  config: ThreadConfig | null;
  graph: {
    /** Canonical JSON of the graph's vocabulary config (checked against the base). */
    config: string;
    count: number;
    frontier: string[];
    /** Id of the node with sequence `count`; null when there are no nodes. */
    lastNodeId: string | null;
  };
  /** The runs, in the state's map order. */
  runs: Array<[string, WorkflowState]>;
  runOrder: string[];
  spend: ThreadSpend;
  latestSystemNodeId?: string;
}

/** The snapshot text of `state`: canonical JSON, so equal states give equal bytes. */
export function serializeThreadSnapshot(state: ThreadState): string {
  const count = state.graph.count;
  const snapshot: ThreadSnapshot = {
    format: THREAD_SNAPSHOT_FORMAT,
    length: state.length,
    stateHash: state.stateHash,
    config: state.config,
    graph: {
      config: canonicalJson(state.graph.config),
      count,
      frontier: [...state.graph.frontier],
      lastNodeId: count === 0 ? null : (getNodeBySequence(state.graph, count)?.id ?? null),
    },
    runs: [...state.runs],
    runOrder: [...state.runOrder],
    spend: state.spend,
    ...(state.latestSystemNodeId === undefined
      ? {}
      : { latestSystemNodeId: state.latestSystemNodeId }),
  };
  return canonicalJson(snapshot);
}

const rejected = (message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message: `snapshot rejected: ${message}`,
  issues: [{ path: '$', message }],
});

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

/** Parses and shape-checks a snapshot text. VALIDATION_FAILED for anything else. */
export function parseThreadSnapshot(text: string): Result<ThreadSnapshot> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return err(rejected('not JSON'));
  }
  if (!isObject(raw)) return err(rejected('not an object'));
  if (raw.format !== THREAD_SNAPSHOT_FORMAT) {
    return err(rejected(`format ${JSON.stringify(raw.format)} is not ${THREAD_SNAPSHOT_FORMAT}`));
  }
  const graph = raw.graph;
  if (
    !isCount(raw.length) ||
    typeof raw.stateHash !== 'string' ||
    !(raw.config === null || isObject(raw.config)) ||
    !isObject(graph) ||
    typeof graph.config !== 'string' ||
    !isCount(graph.count) ||
    !isStringList(graph.frontier) ||
    !(graph.lastNodeId === null || typeof graph.lastNodeId === 'string') ||
    !Array.isArray(raw.runs) ||
    !raw.runs.every(
      (r) => Array.isArray(r) && r.length === 2 && typeof r[0] === 'string' && isObject(r[1]),
    ) ||
    !isStringList(raw.runOrder) ||
    !isObject(raw.spend) ||
    !(raw.latestSystemNodeId === undefined || typeof raw.latestSystemNodeId === 'string')
  ) {
    return err(rejected('malformed'));
  }
  return ok(raw as unknown as ThreadSnapshot);
}

/**
 * The state a snapshot describes, rebuilt on `base`: a state of the same thread at least as far
 * along (its first `count` nodes are the snapshot's nodes). VALIDATION_FAILED when the snapshot
 * is malformed or does not fit the base; the caller then replays instead.
 */
export function restoreThreadSnapshot(
  text: string,
  base: ThreadState,
  options: RestoreOptions = {},
): Result<ThreadState> {
  const parsed = parseThreadSnapshot(text);
  if (!parsed.ok) return parsed;
  return restoreParsedSnapshot(parsed.value, base, options);
}

export interface RestoreOptions {
  /**
   * Give the restored state its own copy of the node storage, O(its nodes), instead of sharing
   * the base's. Worth it when entries will be applied to the result: appending to a graph that
   * shares a longer storage copies it then, at a cost that grows with the base's size.
   */
  detached?: boolean;
}

export function restoreParsedSnapshot(
  snapshot: ThreadSnapshot,
  base: ThreadState,
  options: RestoreOptions = {},
): Result<ThreadState> {
  const { graph } = snapshot;
  if (snapshot.length > base.length) {
    return err(rejected(`it is at log length ${snapshot.length}, the base at ${base.length}`));
  }
  if (graph.count > base.graph.count || graph.count > base.nodeMeta.length) {
    return err(rejected(`it has ${graph.count} nodes, the base ${base.graph.count}`));
  }
  const last = graph.count === 0 ? null : (getNodeBySequence(base.graph, graph.count)?.id ?? null);
  if (last !== graph.lastNodeId) {
    return err(rejected(`its node ${graph.count} is ${graph.lastNodeId}, the base's is ${last}`));
  }
  if (graph.config !== canonicalJson(base.graph.config)) {
    return err(rejected('its node vocabulary differs from the base'));
  }
  const baseThread = base.config?.createdAt;
  if (snapshot.config !== null && baseThread !== snapshot.config.createdAt) {
    return err(rejected('it belongs to another thread than the base'));
  }
  for (const id of graph.frontier) {
    const node = getNode(base.graph, id);
    if (node === undefined || node.sequence > graph.count) {
      return err(rejected(`its frontier node ${id} is not among its ${graph.count} nodes`));
    }
  }
  const runs = new Map<string, WorkflowState>(snapshot.runs);
  if (
    runs.size !== snapshot.runs.length ||
    snapshot.runOrder.length !== runs.size ||
    snapshot.runOrder.some((id) => !runs.has(id))
  ) {
    return err(rejected('its runs and run order disagree'));
  }
  const shared = !options.detached || graph.count === base.graph.store.nodes.length;
  const nodeMeta: Vec<NodeMeta> = {
    items: shared ? base.nodeMeta.items : base.nodeMeta.items.slice(0, graph.count),
    length: graph.count,
  };
  const store = shared ? base.graph.store : cloneStore(base.graph.store, graph.count);
  const state: ThreadState = {
    config: snapshot.config,
    graph: makeGraph(base.graph.config, store, graph.count, graph.frontier),
    nodeMeta,
    runs,
    runOrder: snapshot.runOrder,
    spend: snapshot.spend,
    length: snapshot.length,
    stateHash: snapshot.stateHash,
  };
  if (snapshot.latestSystemNodeId !== undefined) {
    state.latestSystemNodeId = snapshot.latestSystemNodeId;
  }
  return ok(state);
}
