import { ok, type Result } from '../errors.js';
import type { GraphState } from '../graph/index.js';
import { getClusterIndex } from './clusters.js';
import { RESOURCE_KEY_PREFIX } from './facts.js';
import { fitView } from './fit.js';
import {
  type GraphIndex,
  getGraphIndex,
  isEligible,
  newestEquivalent,
  nodeAtSeq,
} from './graph-index.js';
import { type ResolvedInput, resolveProjectionInput } from './input.js';
import { SHRINK_LEVELS } from './render.js';
import {
  getRelevance,
  getScores,
  isMandatoryBits,
  type Relevance,
  reasonsOf,
  type Scores,
  select,
  topByScore,
} from './select.js';
import type {
  CompileOptions,
  OmittedNode,
  Projection,
  ProjectionInput,
  ProjectionSource,
  SelectedNode,
} from './types.js';
import { buildViewContext } from './view.js';

/**
 * Compiles the bounded prompt view of a causal graph for one model call: selection
 * (select.ts), clusters (clusters.ts), fitting to `projectionTargetTokens` under the hard
 * ceiling `maxPromptTokens` (fit.ts) and rendering (render.ts).
 *
 * Pure and deterministic: the same graph content and input give a byte-identical prompt, however
 * the graph was built or loaded. Errors: VALIDATION_FAILED for bad input, PROJECTION_OVERFLOW
 * (`requiredTokens`, `maxPromptTokens`) when the mandatory part cannot fit under the ceiling.
 * Cost: the first projection of a history indexes its nodes, O(n × payload); the index is kept
 * (graph-index.ts) so a later graph value of the same history only indexes its new nodes. Then
 * O(postings of the query and goal terms + the changed clusters' members + selected × shrink
 * levels) per call; `omittedLimit > 0` adds one O(n) scoring pass.
 */
export function compileProjection(
  source: ProjectionSource,
  input: ProjectionInput = {},
  options: CompileOptions = {},
): Result<Projection> {
  const resolved = resolveProjectionInput(input, options);
  if (!resolved.ok) return resolved;
  const graph: GraphState = 'graph' in source ? source.graph : source;
  const index = getGraphIndex(graph);
  const relevance = getRelevance(index, resolved.value.query);
  const scores = getScores(index, relevance);
  try {
    return compileScored(graph, index, relevance, scores, resolved.value);
  } finally {
    scores.release();
  }
}

function compileScored(
  graph: GraphState,
  index: GraphIndex,
  relevance: Relevance,
  scores: Scores,
  resolved: ResolvedInput,
): Result<Projection> {
  const { counter, targetTokens, maxPromptTokens, maxNodes } = resolved;
  const selection = select(index, scores, relevance, maxNodes, resolved.recentNodes);
  const clusters = getClusterIndex(index);
  const context = buildViewContext(index, clusters, selection);
  const fitted = fitView(context, counter, targetTokens, maxPromptTokens);
  if (!fitted.ok) return fitted;
  const view = fitted.value;

  const nodes = view.focus.map((seq) => nodeAtSeq(graph, seq));
  const selected: SelectedNode[] = view.focus.map((seq) => {
    const bits = selection.bits.get(seq)!;
    const node = nodeAtSeq(graph, seq);
    return {
      id: node.id,
      sequence: seq,
      kind: node.kind,
      reasons: reasonsOf(bits),
      mandatory: isMandatoryBits(bits),
      score: roundScore(scores.at(seq)),
    };
  });
  const shown = new Set(view.focus);
  const trimmed = new Set(view.trimmed);
  const omitted = listOmitted(index, scores, shown, trimmed, resolved.omittedLimit);
  return ok({
    prompt: view.prompt,
    tokenEstimate: view.tokens,
    tokenizer: counter.name,
    nodeIds: nodes.map((node) => node.id),
    nodes,
    selected,
    layers: view.layers,
    digest: context.digestLines.join('\n'),
    fingerprint: context.fingerprint,
    clusters: {
      bigBrain: context.bigBrain.slice(0, SHRINK_LEVELS[view.level]!.bigBrain),
      peripheral: context.peripheral.slice(0, SHRINK_LEVELS[view.level]!.peripheral),
    },
    omitted,
    omittedCount: index.count - view.focus.length,
    budget: {
      projectionTargetTokens: targetTokens,
      maxPromptTokens,
      maxNodes,
      requiredTokens: view.requiredTokens,
      shrinkLevel: view.level,
      trimmed: view.trimmed.length,
    },
  });
}

/** Scores are reported to 6 decimals; ranking uses the exact values. */
export const roundScore = (score: number): number => Math.round(score * 1e6) / 1e6;

/** The best-scoring `limit` nodes outside FOCUS, ties by newer sequence, with why each is out. */
function listOmitted(
  index: GraphIndex,
  scores: Scores,
  shown: ReadonlySet<number>,
  trimmed: ReadonlySet<number>,
  limit: number,
): OmittedNode[] {
  if (limit <= 0) return [];
  const k = Math.min(limit, index.count);
  const seqs = topByScore(index.count, scores.all(), k, (seq) => !shown.has(seq));
  return seqs.map((seq) => {
    const node = nodeAtSeq(index.graph, seq);
    const entry: OmittedNode = {
      id: node.id,
      sequence: seq,
      kind: node.kind,
      score: roundScore(scores.at(seq)),
      reason: 'not_selected',
    };
    if (!isEligible(index, seq)) {
      const key = index.facts[seq - 1]!.key!;
      entry.reason = key.startsWith(RESOURCE_KEY_PREFIX) ? 'superseded' : 'duplicate';
      entry.replacedBy = nodeAtSeq(index.graph, newestEquivalent(index, seq)).id;
    } else if (trimmed.has(seq)) {
      entry.reason = 'trimmed';
    }
    return entry;
  });
}
