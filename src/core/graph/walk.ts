import { childSeqs, type GraphState, nodeAt, seqOf } from './store.js';
import type { CausalNode, WalkOptions } from './types.js';

export const DEFAULT_WALK_DEPTH = 16;
export const MAX_WALK_DEPTH = 256;
export const DEFAULT_WALK_LIMIT = 1_000;
export const MAX_WALK_LIMIT = 10_000;
/** A walk stops expanding after visiting this many nodes, whatever the kinds filter keeps. */
export const MAX_WALK_VISITS = 100_000;

/**
 * Ancestors of `id` (parents, their parents, …), breadth first: ordered by distance, then by
 * sequence; the start node excluded. Bounded by `depth` (default 16, max 256), `limit` returned
 * nodes (default 1,000, max 10,000) and MAX_WALK_VISITS visited nodes. `kinds` filters what is
 * returned, not what is traversed. Unknown id → []. Pure.
 */
export function walkAncestors(
  graph: GraphState,
  id: string,
  options: WalkOptions = {},
): CausalNode[] {
  return walk(graph, id, options, (seq, visit) => {
    for (const parent of nodeAt(graph, seq).parents) {
      const parentSeq = seqOf(graph, parent);
      if (parentSeq !== undefined) visit(parentSeq);
    }
  });
}

/** Descendants of `id`, with the same order, bounds and filter as `walkAncestors`. Pure. */
export function walkDescendants(
  graph: GraphState,
  id: string,
  options: WalkOptions = {},
): CausalNode[] {
  return walk(graph, id, options, (seq, visit) => {
    for (const child of childSeqs(graph, seq)) visit(child);
  });
}

type Expand = (seq: number, visit: (next: number) => void) => void;

function walk(graph: GraphState, id: string, options: WalkOptions, expand: Expand): CausalNode[] {
  const start = seqOf(graph, id);
  if (start === undefined) return [];
  const depth = bounded(options.depth, DEFAULT_WALK_DEPTH, MAX_WALK_DEPTH);
  const limit = bounded(options.limit, DEFAULT_WALK_LIMIT, MAX_WALK_LIMIT);
  const kinds = options.kinds ? new Set<string>(options.kinds) : undefined;
  const visited = new Set<number>([start]);
  const out: CausalNode[] = [];
  let level = [start];
  for (let distance = 1; distance <= depth && level.length > 0 && out.length < limit; distance++) {
    const next: number[] = [];
    const visit = (seq: number): void => {
      if (visited.has(seq) || visited.size >= MAX_WALK_VISITS) return;
      visited.add(seq);
      next.push(seq);
    };
    for (const seq of level) expand(seq, visit);
    next.sort((a, b) => a - b);
    for (const seq of next) {
      const node = nodeAt(graph, seq);
      if (kinds && !kinds.has(node.kind)) continue;
      out.push(node);
      if (out.length >= limit) break;
    }
    level = next;
  }
  return out;
}

function bounded(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(0, Math.floor(value)));
}
