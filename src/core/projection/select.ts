import { getFrontier, getNode, getResourceHeads, walkAncestors } from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import {
  type GraphIndex,
  isEligible,
  newestEquivalent,
  nodeAtSeq,
  postingsOf,
} from './graph-index.js';
import { excerpt, queryTerms } from './text.js';
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
  /** The score of the node with sequence `seq`. */
  at(seq: number): number;
  /** How many query terms the node holds. */
  queryHits(seq: number): number;
  /** The nodes holding at least one query or goal term (the only ones with lexical > 0). */
  lexical: readonly number[];
  isLexical(seq: number): boolean;
  /** Every node's score, at s - 1 (computed on first use: O(n)). */
  all(): Float64Array;
}

/**
 * Scores from the term postings: only nodes that hold a query or goal term have a lexical part,
 * so nothing here is O(n) but `all()`.
 */
export function getScores(index: GraphIndex, relevance: Relevance): Scores {
  const { count, store } = index;
  const q = new Uint16Array(count + 1);
  const g = new Uint16Array(count + 1);
  const lexical: number[] = [];
  const tally = (terms: readonly string[], hits: Uint16Array) => {
    for (const term of terms) {
      for (const seq of postingsOf(index, term)) {
        if (q[seq] === 0 && g[seq] === 0) lexical.push(seq);
        hits[seq]!++;
      }
    }
  };
  tally(relevance.queryTerms, q);
  tally(relevance.goalTerms, g);
  const denominator = 2 * relevance.queryTerms.length + relevance.goalTerms.length;
  const at = (seq: number): number => {
    const lex = denominator === 0 ? 0 : (2 * q[seq]! + g[seq]!) / denominator;
    return scoreOf(lex, recencyOf(count, seq), AUTHORITY[store.nodes[seq - 1]!.kind]);
  };
  let all: Float64Array | undefined;
  return {
    at,
    queryHits: (seq) => q[seq]!,
    lexical,
    isLexical: (seq) => q[seq] !== 0 || g[seq] !== 0,
    all() {
      if (all === undefined) {
        all = new Float64Array(count);
        for (let seq = 1; seq <= count; seq++) all[seq - 1] = at(seq);
      }
      return all;
    },
  };
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
    relevance.need > 0 && scores.queryHits(seq) >= relevance.need;
  const open = (seq: number): boolean => !bits.has(seq) && isEligible(index, seq);

  // 2. protected query matches
  if (relevance.need > 0 && bits.size < maxNodes) {
    const matches = bestOf(
      scores.lexical.filter((seq) => isMatch(seq) && open(seq)),
      scores,
      maxNodes - bits.size,
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
    for (const seq of topRelevant(index, scores, maxNodes - bits.size, open)) {
      bits.set(seq, REASON_BIT.relevance);
    }
  }

  // Query matches among the mandatory and closure nodes are reported as such too.
  for (const [seq, value] of bits) if (isMatch(seq)) bits.set(seq, value | REASON_BIT.query_match);
  return { bits, order: [...bits.keys()].sort((a, b) => a - b) };
}

/**
 * The `k` best sequences passing `accept`, by score descending then sequence descending, without
 * scoring every node: the nodes with a lexical part are all considered; the others score at most
 * `scoreOf(0, recency, 1)`, which falls with age, so the newest-first scan over them stops once
 * that bound is below the k-th best score.
 */
export function topRelevant(
  index: GraphIndex,
  scores: Scores,
  k: number,
  accept: (seq: number) => boolean,
): number[] {
  if (k <= 0) return [];
  const best: number[] = [];
  const bestScores: number[] = [];
  const consider = (seq: number) => {
    const s = scores.at(seq);
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const other = bestScores[mid]!;
      if (other > s || (other === s && best[mid]! > seq)) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= k) return;
    best.splice(lo, 0, seq);
    bestScores.splice(lo, 0, s);
    if (best.length > k) {
      best.pop();
      bestScores.pop();
    }
  };
  for (const seq of scores.lexical) if (accept(seq)) consider(seq);
  for (let seq = index.count; seq >= 1; seq--) {
    if (best.length === k && scoreOf(0, recencyOf(index.count, seq), 1) < bestScores[k - 1]!) break;
    if (!scores.isLexical(seq) && accept(seq)) consider(seq);
  }
  return best;
}

/** The `k` best of `seqs` by score descending, then sequence descending. */
function bestOf(seqs: readonly number[], scores: Scores, k: number): number[] {
  const scored = seqs.map((seq) => ({ seq, score: scores.at(seq) }));
  scored.sort((a, b) => b.score - a.score || b.seq - a.seq);
  return scored.slice(0, Math.max(0, k)).map((entry) => entry.seq);
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
