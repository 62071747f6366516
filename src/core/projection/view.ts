import { getFrontier, getNode, getResourceHeads, isSemanticResourceKey } from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import { type ClusterIndex, peripheralClusters, toPin } from './clusters.js';
import {
  eligibleCount,
  type GraphIndex,
  isEligible,
  kindCounts,
  nodeAtSeq,
} from './graph-index.js';
import {
  bigBrainLine,
  focusLine,
  layerLines,
  MAX_LEVEL,
  peripheralLine,
  SHRINK_LEVELS,
  timelineLine,
} from './render.js';
import { isMandatoryBits, reasonsOf, type Selection } from './select.js';
import type { ClusterPin, PeripheralCluster, ProjectionLayers } from './types.js';

/** TIMELINE shows events, not structure (roots, calls, results, state). */
export const TIMELINE_KINDS: ReadonlySet<NodeKind> = new Set([
  'goal',
  'inference',
  'answer',
  'verification',
  'protocol_error',
]);

/**
 * Everything of the prompt but FOCUS, for a given selection: it does not change while the
 * fitter trims FOCUS, only with the shrink level.
 */
export interface ViewContext {
  index: GraphIndex;
  selection: Selection;
  digestLines: string[];
  fingerprint: string;
  bigBrain: ClusterPin[];
  peripheral: PeripheralCluster[];
  /** Newest eligible TIMELINE_KINDS nodes (as many as level 0 shows), ascending. */
  timeline: number[];
}

export function buildViewContext(
  index: GraphIndex,
  clusters: ClusterIndex,
  selection: Selection,
): ViewContext {
  const { graph } = index;
  const mandatory = new Set<number>();
  for (const [seq, bits] of selection.bits) if (isMandatoryBits(bits)) mandatory.add(seq);
  const active: number[] = [];
  for (const id of getFrontier(graph)) {
    const node = getNode(graph, id);
    if (node !== undefined) active.push(node.sequence);
  }
  if (index.latestGoal !== undefined && !active.includes(index.latestGoal)) {
    active.push(index.latestGoal);
  }
  const timeline: number[] = [];
  const wanted = SHRINK_LEVELS[0]!.timeline;
  for (let seq = index.count; seq >= 1 && timeline.length < wanted; seq--) {
    if (TIMELINE_KINDS.has(nodeAtSeq(graph, seq).kind) && isEligible(index, seq)) {
      timeline.push(seq);
    }
  }
  timeline.reverse();
  return {
    index,
    selection,
    digestLines: digestLines(index, clusters),
    fingerprint: clusters.fingerprint,
    bigBrain: clusters.bySize.slice(0, SHRINK_LEVELS[0]!.bigBrain).map(toPin),
    peripheral: peripheralClusters(index, clusters, active, mandatory).slice(
      0,
      SHRINK_LEVELS[0]!.peripheral,
    ),
    timeline,
  };
}

function digestLines(index: GraphIndex, clusters: ClusterIndex): string[] {
  const heads = getResourceHeads(index.graph);
  const memory = heads.filter((head) => isSemanticResourceKey(head.resourceKey)).length;
  const kinds = kindCounts(index).map(([kind, n]) => `${kind}=${n}`);
  return [
    `graph=${clusters.fingerprint} nodes=${index.count} eligible=${eligibleCount(index)}` +
      ` frontier=${getFrontier(index.graph).length} resources=${heads.length - memory}` +
      ` memory=${memory} clusters=${clusters.clusters.length}`,
    `kinds ${kinds.length > 0 ? kinds.join(' ') : 'none'}`,
  ];
}

export interface ContextLines {
  /** Lines before the FOCUS lines, `<FOCUS>` included. */
  head: string[];
  /** Lines after them, `</FOCUS>` included. */
  tail: string[];
  bigBrain: string[];
  peripheral: string[];
  timeline: string[];
}

/** The non-FOCUS lines at shrink level `level`. */
export function contextLines(context: ViewContext, level: number): ContextLines {
  const limits = SHRINK_LEVELS[level]!;
  const { graph } = context.index;
  const bigBrain = context.bigBrain.slice(0, limits.bigBrain).map(bigBrainLine);
  const peripheral = context.peripheral
    .slice(0, limits.peripheral)
    .map((cluster) => peripheralLine(cluster, getNode(graph, cluster.nearestId)!, limits));
  const timeline = context.timeline
    .slice(Math.max(0, context.timeline.length - limits.timeline))
    .map((seq) => timelineLine(nodeAtSeq(graph, seq), limits));
  return {
    head: [
      ...layerLines('DIGEST', context.digestLines),
      ...layerLines('BIG_BRAIN', bigBrain),
      ...layerLines('PERIPHERAL', peripheral),
      '<FOCUS>',
    ],
    tail: ['</FOCUS>', ...layerLines('TIMELINE', timeline)],
    bigBrain,
    peripheral,
    timeline,
  };
}

/** The FOCUS line of a selected node at shrink level `level`. */
export function focusLineOf(context: ViewContext, seq: number, level: number): string {
  const { graph } = context.index;
  const bits = context.selection.bits.get(seq) ?? 0;
  return focusLine(graph, nodeAtSeq(graph, seq), reasonsOf(bits), SHRINK_LEVELS[level]!);
}

export interface RenderedView {
  prompt: string;
  layers: ProjectionLayers;
}

/** The whole prompt for FOCUS = `focus` (ascending sequences) at `level`. */
export function renderView(
  context: ViewContext,
  focus: readonly number[],
  level: number,
): RenderedView {
  const lines = contextLines(context, level);
  const focusLines = focus.map((seq) => focusLineOf(context, seq, level));
  return {
    prompt: [...lines.head, ...focusLines, ...lines.tail].join('\n'),
    layers: {
      bigBrain: lines.bigBrain.join('\n'),
      peripheral: lines.peripheral.join('\n'),
      focus: focusLines.join('\n'),
      timeline: lines.timeline.join('\n'),
    },
  };
}

export { MAX_LEVEL };
