/**
 * The handler that appends recorded nodes to the thread's graph, and the per-node metadata
 * (log index, run, taint, usage) the thread keeps alongside each node.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result } from '../errors.js';
// Internal to the core (not re-exported): the append of recorded nodes, checked as recorded.
import { appendRecordedNodes } from '../graph/append.js';
import { type CausalNode, type GraphState, getNode } from '../graph/index.js';
import { isTombstone } from '../graph/tombstone.js';
import { type ApplyContext, addCreated, runNotFound } from './apply-context.js';
import { chargeUsage } from './apply-runs.js';
import type { NodeTaint, NodeUsage, RecordedNode } from './events.js';
import { copyThreadState, type NodeMeta, type ThreadState } from './state.js';
import { type Vec, vecGet, vecPush } from './vec.js';

/**
 * Appends recorded nodes — checked as recorded against the node rules every path into a graph
 * shares (see appendRecordedNodes), so a log cannot carry in what a live write would refuse —
 * checks each recomputed id, and derives taint, run links and spend. `field`: where the event
 * holds them (`$.event.nodes`, a list, or `$.event.goalNode`), for naming a refused node.
 */
export function appendRecorded(
  state: ThreadState,
  recorded: readonly RecordedNode[],
  ctx: ApplyContext,
  field: string,
): Result<ThreadState> {
  if (recorded.length === 0) return ok(state);
  for (let i = 0; i < recorded.length; i++) {
    const { runId } = recorded[i]!;
    if (runId !== undefined && !state.runs.has(runId)) return err(runNotFound(runId));
  }
  // A redacted node's id cannot be recomputed from its withheld content: it is taken as recorded
  // (the redaction's record in the log commits to the entry as it now reads, see redaction.ts).
  for (let i = 0; i < recorded.length; i++) {
    if (isTombstone(recorded[i]!.payload)) ctx.withheld = true;
  }
  // A recorded node is a draft with extra fields (id, runId, taint, usage) that append ignores.
  const list = field !== '$.event.goalNode';
  const appended = appendRecordedNodes(state.graph, recorded, ctx.entry.recordedAt, {
    trustIds: ctx.options.trustRecordedIds === true || ctx.withheld === true,
    label: (i) => `entry ${ctx.entry.index}, ${list ? `${field}[${i}]` : field}`,
  });
  if (!appended.ok) return appended;
  const { graph, nodes, created } = appended.value;
  let nodeMeta = state.nodeMeta;
  let latestSystemNodeId = state.latestSystemNodeId;
  let charges: Array<{ runId: string | undefined; nodeId: string; usage: NodeUsage }> | undefined;
  for (let i = 0; i < recorded.length; i++) {
    const want = recorded[i]!;
    const node = nodes[i]!;
    if (node.id !== want.id) {
      return err({
        code: 'NODE_ID_MISMATCH',
        message: `recorded node ${want.id} does not match its content (recomputed ${node.id}): the entry is corrupt`,
        nodeId: want.id,
      });
    }
    if (!created[i]) continue;
    const taint = want.taint ?? deriveTaint(graph, nodeMeta, node);
    const meta = nodeMetaOf(ctx.entry.index, want.runId, taint, want.usage);
    if (want.usage !== undefined) {
      charges ??= [];
      charges.push({ runId: want.runId, nodeId: node.id, usage: want.usage });
    }
    nodeMeta = vecPush(nodeMeta, meta, sameNodeMeta);
    if (node.kind === 'system') latestSystemNodeId = node.id;
    addCreated(ctx, node.id);
    ctx.effects?.push({ type: 'node_appended', node, meta });
  }
  let next = copyThreadState(state, latestSystemNodeId);
  next.graph = graph;
  next.nodeMeta = nodeMeta;
  if (charges !== undefined) {
    for (const charge of charges) {
      const charged = chargeUsage(next, charge.runId, charge.nodeId, charge.usage, ctx);
      if (!charged.ok) return charged;
      next = charged.value;
    }
  }
  return ok(next);
}

/**
 * A node's metadata, keys in the order {logIndex, runId, taint, usage}. The common shapes are
 * single literals, so a record kept for every node of the graph needs no separate property store.
 */
function nodeMetaOf(
  logIndex: number,
  runId: string | undefined,
  taint: NodeTaint | undefined,
  usage: NodeUsage | undefined,
): NodeMeta {
  if (taint === undefined && usage === undefined) {
    return runId === undefined ? { logIndex } : { logIndex, runId };
  }
  const meta: NodeMeta = { logIndex };
  if (runId !== undefined) meta.runId = runId;
  if (taint !== undefined) meta.taint = taint;
  if (usage !== undefined) meta.usage = usage;
  return meta;
}

/** Equal node metadata: lets a replay onto an older state share the newer one's (see vecPush). */
function sameNodeMeta(a: NodeMeta, b: NodeMeta): boolean {
  return (
    a.logIndex === b.logIndex &&
    a.runId === b.runId &&
    (a.taint === b.taint ||
      (a.taint !== undefined &&
        b.taint !== undefined &&
        canonicalJson(a.taint) === canonicalJson(b.taint))) &&
    (a.usage === b.usage ||
      (a.usage !== undefined &&
        b.usage !== undefined &&
        canonicalJson(a.usage) === canonicalJson(b.usage)))
  );
}

/** Taint flows to every descendant: a node with a tainted parent is tainted as derived. */
function deriveTaint(
  graph: GraphState,
  nodeMeta: Vec<NodeMeta>,
  node: CausalNode,
): NodeTaint | undefined {
  let from: string[] | undefined;
  const { parents } = node;
  // An index loop: for-of over a frozen array allocates an iterator result per step.
  for (let i = 0; i < parents.length; i++) {
    const parentId = parents[i] as string;
    const parent = getNode(graph, parentId);
    if (parent && vecGet(nodeMeta, parent.sequence - 1)?.taint) {
      from ??= [];
      from.push(parentId);
    }
  }
  return from === undefined ? undefined : { source: 'derived', derivedFrom: from };
}

export function getNodeMeta(state: ThreadState, nodeId: string): NodeMeta | undefined {
  const node = getNode(state.graph, nodeId);
  return node ? vecGet(state.nodeMeta, node.sequence - 1) : undefined;
}
