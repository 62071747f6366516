import { getFrontier, getNode, getResourceHeads, walkAncestors } from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import type { NodeFacts } from './facts.js';
import { type GraphIndex, isEligible, newestEquivalent, nodeAtSeq } from './graph-index.js';
import { excerpt, queryTerms, termBit } from './text.js';
import { MAX_QUERY_CHARS, SELECTION_REASONS, type SelectionReason } from './types.js';

/*
 * Selection (seed 003, seeds/README, issue 5 §1). Every node gets a relevance score
 *
 *   score = 0.55 × lexical + 0.30 × recency + 0.15 × authority
 *   lexical   = (2 × query terms present + goal terms present) / (2 × |query terms| + |goal terms|)
 *   recency   = 1 / (1 + (count − sequence) / 32)
 *   authority = by kind (AUTHORITY)
 *
 * where the goal terms are those of the latest goal not already in the query. A node "matches
 * the query" when it holds at least half of the query's terms (rounded up).
 *
 * Only eligible nodes (the newest of their equivalents, see facts.ts) are ever selected. The
 * view is filled in this order, ties broken by the newer sequence:
 *   1. mandatory, whatever maxNodes says: the latest system node, the latest goal, every frontier
 *      head, every current resource head (semantic memory included), the `recentNodes` newest
 *      eligible nodes. A mandatory node that is not eligible is replaced by its newest equivalent.
 *   2. protected query matches, best score first, while fewer than maxNodes are selected;
 *   3. operational closure: ancestors (up to 2 steps, 16 per walk) of the nodes selected so far,
 *      newest source first, at most 16 in all, while fewer than maxNodes are selected;
 *   4. relevance: the best-scoring remaining eligible nodes, while fewer than maxNodes are selected.
 */

export const SCORE_WEIGHTS = Object.freeze({ lexical: 0.55, recency: 0.3, authority: 0.15 });
export const RECENCY_SCALE = 32;
export const CLOSURE_DEPTH = 2;
export const CLOSURE_WALK_LIMIT = 16;
export const CLOSURE_LIMIT = 16;

/** Evidence authority by kind: roots and checked results outrank intermediate reasoning. */
export const AUTHORITY: Readonly<Record<NodeKind, number>> = Object.freeze({
  system: 1,
  goal: 0.9,
  verification: 0.8,
  answer: 0.7,
  resource: 0.7,
  semantic: 0.6,
  tool_result: 0.6,
  inference: 0.4,
  tool_call: 0.3,
  protocol_error: 0.2,
});

export const REASON_BIT: Readonly<Record<SelectionReason, number>> = Object.freeze(
  Object.fromEntries(SELECTION_REASONS.map((reason, i) => [reason, 1 << i])) as Record<
    SelectionReason,
    number
  >,
);

const MANDATORY_BITS =
  REASON_BIT.latest_system |
  REASON_BIT.latest_goal |
  REASON_BIT.frontier |
  REASON_BIT.current_resource |
  REASON_BIT.recent;

export const isMandatoryBits = (bits: number): boolean => (bits & MANDATORY_BITS) !== 0;

/** Removable when trimming: in the view only through closure or relevance. */
export const isRemovableBits = (bits: number): boolean =>
  (bits & (MANDATORY_BITS | REASON_BIT.query_match)) === 0;

export const reasonsOf = (bits: number): SelectionReason[] =>
  SELECTION_REASONS.filter((reason) => (bits & REASON_BIT[reason]) !== 0);

export interface Relevance {
  queryTerms: string[];
  goalTerms: string[];
  /** Query terms a node must hold to match the query; 0 when there is no query. */
  need: number;
}

/** The query's terms and the latest goal's other terms. */
export function getRelevance(index: GraphIndex, query: string): Relevance {
  const terms = queryTerms(query);
  const goal =
    index.latestGoal === undefined ? undefined : nodeAtSeq(index.graph, index.latestGoal);
  const goalTerms =
    goal === undefined
      ? []
      : queryTerms(excerpt(goal.payload, MAX_QUERY_CHARS)).filter((t) => !terms.includes(t));
  return { queryTerms: terms, goalTerms, need: Math.ceil(terms.length / 2) };
}

export interface Scores {
  /** Score of sequence s at index s - 1. */
  score: Float64Array;
  /** Query terms held by sequence s at index s - 1. */
  queryHits: Uint16Array;
}

/** Scores every node of the graph. O(nodes × terms). */
export function scoreAll(index: GraphIndex, relevance: Relevance): Scores {
  const { count, facts, graph } = index;
  const score = new Float64Array(count);
  const queryHits = new Uint16Array(count);
  const query = relevance.queryTerms.map(needle);
  const goal = relevance.goalTerms.map(needle);
  const denominator = 2 * query.length + goal.length;
  for (let seq = 1; seq <= count; seq++) {
    const f = facts[seq - 1]!;
    const q = denominator === 0 ? 0 : hits(f, query);
    const g = denominator === 0 ? 0 : hits(f, goal);
    const lexical = denominator === 0 ? 0 : (2 * q + g) / denominator;
    score[seq - 1] = scoreOf(lexical, recencyOf(count, seq), AUTHORITY[nodeAtSeq(graph, seq).kind]);
    queryHits[seq - 1] = q;
  }
  return { score, queryHits };
}

interface Needle {
  text: string;
  lo: number;
  hi: number;
}

function needle(term: string): Needle {
  const bit = termBit(term);
  return {
    text: ' ' + term + ' ',
    lo: bit < 32 ? 1 << bit : 0,
    hi: bit < 32 ? 0 : 1 << (bit - 32),
  };
}

/** How many of the needles' terms the node holds; the signature rules most out without a search. */
function hits(facts: NodeFacts, needles: readonly Needle[]): number {
  let found = 0;
  for (let i = 0; i < needles.length; i++) {
    const n = needles[i]!;
    if ((facts.sigLo & n.lo) === 0 && (facts.sigHi & n.hi) === 0) continue;
    if (facts.terms.includes(n.text)) found++;
  }
  return found;
}

export const recencyOf = (count: number, seq: number): number =>
  1 / (1 + (count - seq) / RECENCY_SCALE);

export const scoreOf = (lexical: number, recency: number, authority: number): number =>
  SCORE_WEIGHTS.lexical * lexical +
  SCORE_WEIGHTS.recency * recency +
  SCORE_WEIGHTS.authority * authority;

export interface Selection {
  /** Selected sequence → reason bits. */
  bits: Map<number, number>;
  /** Selected sequences, ascending. */
  order: number[];
}

/** Steps 1–4 above. */
export function select(
  index: GraphIndex,
  scores: Scores,
  relevance: Relevance,
  maxNodes: number,
  recentNodes: number,
): Selection {
  const { graph } = index;
  const bits = new Map<number, number>();
  const mark = (seq: number, bit: number): void => {
    const target = newestEquivalent(index, seq);
    bits.set(target, (bits.get(target) ?? 0) | bit);
  };
  if (index.latestSystem !== undefined) mark(index.latestSystem, REASON_BIT.latest_system);
  if (index.latestGoal !== undefined) mark(index.latestGoal, REASON_BIT.latest_goal);
  for (const id of getFrontier(graph)) {
    const node = getNode(graph, id);
    if (node !== undefined) mark(node.sequence, REASON_BIT.frontier);
  }
  for (const head of getResourceHeads(graph)) mark(head.sequence, REASON_BIT.current_resource);
  let recent = 0;
  for (let seq = index.count; seq >= 1 && recent < recentNodes; seq--) {
    if (!isEligible(index, seq)) continue;
    mark(seq, REASON_BIT.recent);
    recent++;
  }

  const isMatch = (seq: number): boolean =>
    relevance.need > 0 && scores.queryHits[seq - 1]! >= relevance.need;
  const open = (seq: number): boolean => !bits.has(seq) && isEligible(index, seq);

  // 2. protected query matches
  if (relevance.need > 0 && bits.size < maxNodes) {
    const matches = topByScore(
      index.count,
      scores.score,
      maxNodes - bits.size,
      (seq) => isMatch(seq) && open(seq),
    );
    for (const seq of matches) bits.set(seq, REASON_BIT.query_match);
  }

  // 3. bounded operational closure
  const sources = [...bits.keys()].sort((a, b) => b - a);
  let closure = 0;
  for (const source of sources) {
    if (closure >= CLOSURE_LIMIT || bits.size >= maxNodes) break;
    const id = nodeAtSeq(graph, source).id;
    for (const ancestor of walkAncestors(graph, id, {
      depth: CLOSURE_DEPTH,
      limit: CLOSURE_WALK_LIMIT,
    })) {
      if (closure >= CLOSURE_LIMIT || bits.size >= maxNodes) break;
      if (!open(ancestor.sequence)) continue;
      bits.set(ancestor.sequence, REASON_BIT.closure);
      closure++;
    }
  }

  // 4. relevance
  if (bits.size < maxNodes) {
    for (const seq of topByScore(index.count, scores.score, maxNodes - bits.size, open)) {
      bits.set(seq, REASON_BIT.relevance);
    }
  }

  // Query matches among the mandatory and closure nodes are reported as such too.
  for (const [seq, value] of bits) if (isMatch(seq)) bits.set(seq, value | REASON_BIT.query_match);
  return { bits, order: [...bits.keys()].sort((a, b) => a - b) };
}

/**
 * The `k` best sequences passing `accept`, by score descending then sequence descending.
 * O(n log k): a sorted buffer of the best k so far.
 */
export function topByScore(
  count: number,
  score: Float64Array,
  k: number,
  accept: (seq: number) => boolean,
): number[] {
  if (k <= 0) return [];
  const best: number[] = [];
  // Newest first, so an equal score never displaces the newer sequence already kept.
  for (let seq = count; seq >= 1; seq--) {
    const s = score[seq - 1]!;
    if (best.length === k && s <= score[best[k - 1]! - 1]!) continue;
    if (!accept(seq)) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      // Keep existing entries ahead on ties: they are newer.
      if (score[best[mid]! - 1]! >= s) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, seq);
    if (best.length > k) best.pop();
  }
  return best;
}
