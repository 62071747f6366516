/**
 * Thread snapshots: a ThreadState after a prefix of its log, as canonical JSON text, for
 * time travel without replaying the whole prefix (snapshots are caches: deleting them changes no answer).
 *
 * What a snapshot holds: everything of the state that an entry can change in place — the thread
 * config, the runs, the spend, the frontier, the latest system node, the log length and state
 * hash — plus the number of nodes and the id of the last one. It does NOT hold the nodes or
 * their metadata: both are append-only (an entry only ever adds nodes, at the end), so the nodes
 * of the state after `n` entries are exactly the first `count` nodes of any later state of the
 * same log. A snapshot is restored onto such a later state (`base`, e.g. the engine's latest
 * state of the thread), sharing its node storage the way every older graph value does: O(size
 * of the runs), not O(nodes). The graph's readers only ever look at its first `count` nodes, and
 * appending to it never writes into the shared storage, so the base is never affected: replaying
 * the log's next entries re-appends the very nodes the storage holds next and fast-forwards over
 * them (still O(what the entries add)); anything else copies the storage first
 * (copy-on-divergence).
 *
 * A snapshot is never trusted blindly: `restoreThreadSnapshot` checks the format, the shape, and
 * that the base really extends it (enough nodes, the same last node id, the same thread and node
 * vocabulary); the caller also checks the snapshot's state hash against the log entry it claims
 * to follow, and the replay of the tail checks every later entry's hash. Pure.
 *
 * Two formats: a full snapshot (`weft.thread-snapshot/1`) holds every run; a delta snapshot
 * (`weft.thread-snapshot-delta/1`) names a full one (its log length and checksum) and holds only
 * the runs that differ from that one's, plus the run ids started since — everything else is
 * whole. Runs dominate a snapshot's size and most are untouched between two snapshots, so
 * deltas let snapshots be dense (a short tail to replay) without copying every run each time.
 * `applySnapshotDelta` turns a delta and its base back into the full snapshot it stands for.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result, type WeftError } from '../errors.js';
import { getNode, getNodeBySequence } from '../graph/index.js';
// Internals of the graph's storage: a restored graph is a value over shared storage.
import { makeGraph } from '../graph/store.js';
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

/** The `format` field of a delta snapshot. */
export const THREAD_SNAPSHOT_DELTA_FORMAT = 'weft.thread-snapshot-delta/1';

/** The parsed form of a delta snapshot: a full one's fields, with runs relative to `base`. */
export interface ThreadSnapshotDelta extends Omit<ThreadSnapshot, 'format' | 'runs' | 'runOrder'> {
  format: typeof THREAD_SNAPSHOT_DELTA_FORMAT;
  /** The full snapshot the runs are relative to: its log length and its row's checksum. */
  base: { length: number; checksum: string };
  /** The runs that differ from (or are missing in) the base's, in the state's map order. */
  runs: Array<[string, WorkflowState]>;
  /** The run ids after the base's run order (the run order only ever grows). */
  runOrderAdded: string[];
}

/** What a delta is written against: a full snapshot of a state of the same log. */
export interface SnapshotBase {
  length: number;
  checksum: string;
  /** The state's runs as the full snapshot holds them (compared by identity). */
  runs: ReadonlyMap<string, WorkflowState>;
  runOrder: readonly string[];
}

/** The snapshot text of `state`: canonical JSON, so equal states give equal bytes. */
export function serializeThreadSnapshot(state: ThreadState): string {
  const snapshot: ThreadSnapshot = {
    ...commonFields(state),
    format: THREAD_SNAPSHOT_FORMAT,
    runs: [...state.runs],
    runOrder: [...state.runOrder],
  };
  return canonicalJson(snapshot);
}

/** The fields full and delta snapshots share. */
function commonFields(state: ThreadState): Omit<ThreadSnapshot, 'format' | 'runs' | 'runOrder'> {
  const count = state.graph.count;
  return {
    length: state.length,
    stateHash: state.stateHash,
    config: state.config,
    graph: {
      config: canonicalJson(state.graph.config),
      count,
      frontier: [...state.graph.frontier],
      lastNodeId: count === 0 ? null : (getNodeBySequence(state.graph, count)?.id ?? null),
    },
    spend: state.spend,
    ...(state.latestSystemNodeId === undefined
      ? {}
      : { latestSystemNodeId: state.latestSystemNodeId }),
  };
}

/**
 * The delta snapshot text of `state` against `base` (a full snapshot of an earlier state of the
 * same log): only the runs that are not the very values the base holds. Undefined when the
 * state does not extend the base (not later, or a run order that does not continue the base's):
 * then a full snapshot is due.
 */
export function serializeThreadSnapshotDelta(
  state: ThreadState,
  base: SnapshotBase,
): string | undefined {
  if (base.length >= state.length || state.runOrder.length < base.runOrder.length) {
    return undefined;
  }
  for (let i = 0; i < base.runOrder.length; i++) {
    if (state.runOrder[i] !== base.runOrder[i]) return undefined;
  }
  const runs: Array<[string, WorkflowState]> = [];
  for (const [id, run] of state.runs) if (base.runs.get(id) !== run) runs.push([id, run]);
  const delta: ThreadSnapshotDelta = {
    ...commonFields(state),
    format: THREAD_SNAPSHOT_DELTA_FORMAT,
    base: { length: base.length, checksum: base.checksum },
    runs,
    runOrderAdded: state.runOrder.slice(base.runOrder.length),
  };
  return canonicalJson(delta);
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

/** Parses and shape-checks a full snapshot text. VALIDATION_FAILED for anything else. */
export function parseThreadSnapshot(text: string): Result<ThreadSnapshot> {
  const parsed = parseStoredSnapshot(text);
  if (!parsed.ok || parsed.value.format === THREAD_SNAPSHOT_FORMAT) {
    return parsed as Result<ThreadSnapshot>;
  }
  return err(rejected(`format ${parsed.value.format} is not ${THREAD_SNAPSHOT_FORMAT}`));
}

/**
 * Parses and shape-checks a stored snapshot text, full or delta. VALIDATION_FAILED for anything
 * else.
 */
export function parseStoredSnapshot(text: string): Result<ThreadSnapshot | ThreadSnapshotDelta> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return err(rejected('not JSON'));
  }
  if (!isObject(raw)) return err(rejected('not an object'));
  const delta = raw.format === THREAD_SNAPSHOT_DELTA_FORMAT;
  if (raw.format !== THREAD_SNAPSHOT_FORMAT && !delta) {
    return err(
      rejected(
        `format ${JSON.stringify(raw.format)} is neither ${THREAD_SNAPSHOT_FORMAT} nor ${THREAD_SNAPSHOT_DELTA_FORMAT}`,
      ),
    );
  }
  const graph = raw.graph;
  const base = raw.base;
  if (
    (delta
      ? !isObject(base) ||
        !isCount(base.length) ||
        typeof base.checksum !== 'string' ||
        !isStringList(raw.runOrderAdded)
      : !isStringList(raw.runOrder)) ||
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
    !isObject(raw.spend) ||
    !(raw.latestSystemNodeId === undefined || typeof raw.latestSystemNodeId === 'string')
  ) {
    return err(rejected('malformed'));
  }
  return ok(raw as unknown as ThreadSnapshot | ThreadSnapshotDelta);
}

/**
 * The full snapshot a delta stands for, given the full snapshot it names (whose row checksum is
 * `baseChecksum`). VALIDATION_FAILED when the base is not the one named, or lacks a run the delta
 * leaves to it.
 */
export function applySnapshotDelta(
  delta: ThreadSnapshotDelta,
  base: ThreadSnapshot,
  baseChecksum: string,
): Result<ThreadSnapshot> {
  if (
    base.length !== delta.base.length ||
    baseChecksum !== delta.base.checksum ||
    base.length >= delta.length
  ) {
    return err(rejected(`its base is not the snapshot at ${delta.base.length} it names`));
  }
  const changed = new Map(delta.runs);
  const held = new Map(base.runs);
  const runOrder = [...base.runOrder, ...delta.runOrderAdded];
  // The state's map order: the base's runs in its order, then the ones started since.
  const runs: Array<[string, WorkflowState]> = [];
  for (const [id] of base.runs) runs.push([id, changed.get(id) ?? held.get(id)!]);
  for (const [id, run] of delta.runs) if (!held.has(id)) runs.push([id, run]);
  if (runs.length !== runOrder.length) {
    return err(rejected('its runs and run order disagree with its base'));
  }
  const { base: _base, runOrderAdded: _added, ...rest } = delta;
  return ok({ ...rest, format: THREAD_SNAPSHOT_FORMAT, runs, runOrder });
}

/**
 * The state a snapshot describes, rebuilt on `base`: a state of the same thread at least as far
 * along (its first `count` nodes are the snapshot's nodes). VALIDATION_FAILED when the snapshot
 * is malformed or does not fit the base; the caller then replays instead.
 */
export function restoreThreadSnapshot(text: string, base: ThreadState): Result<ThreadState> {
  const parsed = parseThreadSnapshot(text);
  if (!parsed.ok) return parsed;
  return restoreParsedSnapshot(parsed.value, base);
}

/** `restoreThreadSnapshot` of an already parsed (and, for a delta, applied) snapshot. */
export function restoreParsedSnapshot(
  snapshot: ThreadSnapshot,
  base: ThreadState,
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
  const nodeMeta: Vec<NodeMeta> = { items: base.nodeMeta.items, length: graph.count };
  const state: ThreadState = {
    config: snapshot.config,
    graph: makeGraph(base.graph.config, base.graph.store, graph.count, graph.frontier),
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
