import { getFrontier, getNode, getResourceHeads, walkAncestors } from '../graph/index.js';
import { AUTHORITY } from './facts.js';
import {
  type GraphIndex,
  type IndexStore,
  isEligible,
  newestEquivalent,
  nodeAtSeq,
  type ScoreScratch,
} from './graph-index.js';
import { countAtMost } from './sorted.js';
import { excerpt, queryTerms } from './text.js';
import { MAX_QUERY_CHARS, SELECTION_REASONS, type SelectionReason } from './types.js';

/*
 * Selection. Every node gets a relevance score
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

export { AUTHORITY };

export const SCORE_WEIGHTS = Object.freeze({ lexical: 0.55, recency: 0.3, authority: 0.15 });
export const RECENCY_SCALE = 32;
export const CLOSURE_DEPTH = 2;
export const CLOSURE_WALK_LIMIT = 16;
export const CLOSURE_LIMIT = 16;

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
  /**
   * The nodes holding at least one query or goal term (the only ones with lexical > 0):
   * `lexical[0 … lexicalCount)`, in no particular order.
   */
  lexical: Int32Array;
  lexicalCount: number;
  isLexical(seq: number): boolean;
  /** Every node's score, at s - 1 (computed on first use: O(n)). */
  all(): Float64Array;
  /** Gives the index's scratch space back: no method may be called afterwards. */
  release(): void;
}

/**
 * Scores from the term postings: only nodes that hold a query or goal term have a lexical part,
 * so nothing here is O(n) but `all()`: O(postings of the query and goal terms). The hit counters
 * live in the index's scratch space (graph-index.ts) until `release()`.
 */
export function getScores(index: GraphIndex, relevance: Relevance): Scores {
  const { count, store } = index;
  const scratch = claimScratch(store, count + 1);
  const { q, g, hits } = scratch;
  let lexicalCount = 0;
  const tally = (terms: readonly string[], counter: Uint16Array) => {
    for (const term of terms) {
      const list = store.postings.get(term);
      if (list === undefined) continue;
      const n = countAtMost(list, count);
      for (let i = 0; i < n; i++) {
        const seq = list[i]!;
        if (q[seq] === 0 && g[seq] === 0) hits[lexicalCount++] = seq;
        counter[seq]!++;
      }
    }
  };
  tally(relevance.queryTerms, q);
  tally(relevance.goalTerms, g);
  const denominator = 2 * relevance.queryTerms.length + relevance.goalTerms.length;
  const authority = store.authority;
  const at = (seq: number): number => {
    const lex = denominator === 0 ? 0 : (2 * q[seq]! + g[seq]!) / denominator;
    return scoreOf(lex, recencyOf(count, seq), authority[seq - 1]!);
  };
  let all: Float64Array | undefined;
  return {
    at,
    queryHits: (seq) => q[seq]!,
    lexical: hits,
    lexicalCount,
    isLexical: (seq) => q[seq] !== 0 || g[seq] !== 0,
    all() {
      if (all === undefined) {
        all = new Float64Array(count);
        for (let seq = 1; seq <= count; seq++) all[seq - 1] = at(seq);
      }
      return all;
    },
    release() {
      for (let i = 0; i < lexicalCount; i++) {
        q[hits[i]!] = 0;
        g[hits[i]!] = 0;
      }
      lexicalCount = 0;
      scratch.busy = false;
    },
  };
}

/** The store's scratch space when free and large enough (grown when not), else a fresh one. */
function claimScratch(store: IndexStore, size: number): ScoreScratch {
  let scratch = store.scratch;
  if (scratch?.busy) return newScratch(size);
  if (scratch === undefined || scratch.q.length < size) {
    scratch = newScratch(Math.max(size, Math.ceil(1.25 * (scratch?.q.length ?? 0)), 1024));
    store.scratch = scratch;
  }
  scratch.busy = true;
  return scratch;
}

const newScratch = (size: number): ScoreScratch => ({
  q: new Uint16Array(size),
  g: new Uint16Array(size),
  hits: new Int32Array(size),
  busy: true,
});

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
    const best = new TopK(maxNodes - bits.size);
    for (let i = 0; i < scores.lexicalCount; i++) {
      const seq = scores.lexical[i]!;
      if (scores.queryHits(seq) < relevance.need) continue;
      const score = scores.at(seq);
      if (best.admits(score, seq) && open(seq)) best.add(score, seq);
    }
    for (const seq of best.sorted()) bits.set(seq, REASON_BIT.query_match);
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
 * that bound is below the k-th best score. O(lexical × log k + the scanned tail).
 */
export function topRelevant(
  index: GraphIndex,
  scores: Scores,
  k: number,
  accept: (seq: number) => boolean,
): number[] {
  if (k <= 0) return [];
  const best = new TopK(k);
  for (let i = 0; i < scores.lexicalCount; i++) {
    const seq = scores.lexical[i]!;
    const score = scores.at(seq);
    if (best.admits(score, seq) && accept(seq)) best.add(score, seq);
  }
  for (let seq = index.count; seq >= 1; seq--) {
    if (best.full() && scoreOf(0, recencyOf(index.count, seq), 1) < best.worstScore()) break;
    if (scores.isLexical(seq)) continue;
    const score = scores.at(seq);
    if (best.admits(score, seq) && accept(seq)) best.add(score, seq);
  }
  return best.sorted();
}

/**
 * The best `k` of the (score, sequence) pairs added, ranked by score descending then sequence
 * descending (sequences are distinct, so the ranking is total and the result does not depend on
 * the order of adding). A binary min-heap on that ranking: O(log k) an addition.
 */
class TopK {
  private readonly seqs: number[] = [];
  private readonly scores: number[] = [];
  constructor(private readonly k: number) {}

  full(): boolean {
    return this.seqs.length >= this.k;
  }

  /** The k-th best score so far (the heap holds k). */
  worstScore(): number {
    return this.scores[0]!;
  }

  /** Whether (score, seq) would be kept. */
  admits(score: number, seq: number): boolean {
    if (this.k <= 0) return false;
    if (this.seqs.length < this.k) return true;
    return ranksBelow(this.scores[0]!, this.seqs[0]!, score, seq);
  }

  /** Adds a pair that `admits` accepted. */
  add(score: number, seq: number): void {
    const { seqs, scores } = this;
    if (seqs.length < this.k) {
      seqs.push(seq);
      scores.push(score);
      this.up(seqs.length - 1);
    } else {
      seqs[0] = seq;
      scores[0] = score;
      this.down(0);
    }
  }

  /** The kept sequences, best first. */
  sorted(): number[] {
    const order = this.seqs.map((_, i) => i);
    order.sort((a, b) => this.scores[b]! - this.scores[a]! || this.seqs[b]! - this.seqs[a]!);
    return order.map((i) => this.seqs[i]!);
  }

  private up(i: number): void {
    const { seqs, scores } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!ranksBelow(scores[i]!, seqs[i]!, scores[parent]!, seqs[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const { seqs, scores } = this;
    const n = seqs.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      let low = left;
      const right = left + 1;
      if (right < n && ranksBelow(scores[right]!, seqs[right]!, scores[left]!, seqs[left]!)) {
        low = right;
      }
      if (!ranksBelow(scores[low]!, seqs[low]!, scores[i]!, seqs[i]!)) break;
      this.swap(i, low);
      i = low;
    }
  }

  private swap(a: number, b: number): void {
    const { seqs, scores } = this;
    const seq = seqs[a]!;
    const score = scores[a]!;
    seqs[a] = seqs[b]!;
    scores[a] = scores[b]!;
    seqs[b] = seq;
    scores[b] = score;
  }
}

/** True when (scoreA, seqA) ranks below (scoreB, seqB): a lower score, or equal and older. */
const ranksBelow = (scoreA: number, seqA: number, scoreB: number, seqB: number): boolean =>
  scoreA < scoreB || (scoreA === scoreB && seqA < seqB);

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
