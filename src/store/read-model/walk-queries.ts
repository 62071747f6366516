/**
 * Ancestor and descendant walks over the stored graph (`node_parent`), level by level: the same
 * walk as core/graph/walk.ts — breadth first, nearest first, then by sequence; bounded by depth,
 * limit and visited nodes; `kinds` filtering what is returned, not what is traversed — answered
 * with one indexed query per level (per 400 nodes of a level), so a cold thread is not folded
 * to walk a few hops.
 */
import {
  DEFAULT_WALK_DEPTH,
  DEFAULT_WALK_LIMIT,
  MAX_WALK_DEPTH,
  MAX_WALK_LIMIT,
  MAX_WALK_VISITS,
} from '../../core/graph/walk.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { node, nodeParent } from '../tables/index.js';
import { isOwn, type Lineage, type Lineages } from './lineage.js';
import { edgesOfChildren, edgesToParents, nodesById, nodesBySequence } from './lineage-nodes.js';
import { marks } from './select.js';

/** Nodes of a level per statement (one bound value each, under the drivers' limits). */
const KEYS_PER_STATEMENT = 400;

export interface WalkQuery {
  threadId: string;
  id: string;
  direction: 'ancestors' | 'descendants';
  depth?: number | undefined;
  limit?: number | undefined;
  kinds?: readonly string[] | undefined;
}

export interface WalkQueries {
  /** Ids of the nodes the walk reaches, in walk order; [] for an unknown node. */
  walk(query: WalkQuery): Promise<string[]>;
}

const bounded = (value: number | undefined, fallback: number, max: number) =>
  value === undefined || !Number.isFinite(value)
    ? fallback
    : Math.min(max, Math.max(0, Math.floor(value)));

export function createWalkQueries(weft: WeftPrisma, lineages: Lineages): WalkQueries {
  const N = node.c;
  const E = nodeParent.c;

  /** `step` over a shared history (lineage.ts): edges first, then the nodes they reach. */
  async function lineageStep(lineage: Lineage, seqs: readonly number[], up: boolean) {
    const edges = up
      ? await edgesOfChildren(weft, lineage, seqs)
      : await edgesToParents(weft, lineage, seqs);
    const reached = new Map(
      (
        await nodesBySequence(
          weft,
          lineage,
          edges.map((e) => (up ? e.parentSeq : e.childSeq)),
        )
      ).map((n) => [n.sequence, n] as const),
    );
    const out = edges.map((e) => {
      const target = reached.get(up ? e.parentSeq : e.childSeq)!;
      return {
        from: up ? e.childSeq : e.parentSeq,
        order: up ? e.position : e.childSeq,
        seq: target.sequence,
        id: target.id,
        kind: target.kind,
      };
    });
    const rank = new Map(seqs.map((s, i) => [s, i]));
    return out.sort((a, b) => rank.get(a.from)! - rank.get(b.from)! || a.order - b.order);
  }

  /** The nodes one step from `seqs` (in their order), as (from, seq, id, kind) in edge order. */
  async function step(threadId: string, seqs: readonly number[], up: boolean) {
    const [from, to] = up ? [E.childSeq, E.parentSeq] : [E.parentSeq, E.childSeq];
    const out: Array<{ from: number; order: number; seq: number; id: string; kind: string }> = [];
    for (let i = 0; i < seqs.length; i += KEYS_PER_STATEMENT) {
      const chunk = seqs.slice(i, i + KEYS_PER_STATEMENT);
      const rows = await rawQuery(
        weft,
        `SELECT e.${E.childSeq}, e.${E.parentSeq}, e.${E.position}, n.${N.id}, n.${N.kind}
          FROM ${nodeParent.sql} e
          JOIN ${node.sql} n ON n.${N.threadId} = e.${E.threadId} AND n.${N.sequence} = e.${to}
          WHERE e.${E.threadId} = ? AND e.${from} IN (${marks(chunk.length)})`,
        [threadId, ...chunk],
      );
      for (const row of rows) {
        const edge = nodeParent.decode(row, weft.provider);
        const target = node.decode(row, weft.provider);
        out.push({
          from: up ? edge.childSeq : edge.parentSeq,
          order: up ? edge.position : edge.childSeq,
          seq: up ? edge.parentSeq : edge.childSeq,
          id: target.id,
          kind: target.kind,
        });
      }
    }
    // The in-memory walk expands a level in sequence order, each node's parents by position
    // (children by sequence): the order in which the visit bound is met.
    const rank = new Map(seqs.map((s, i) => [s, i]));
    return out.sort((a, b) => rank.get(a.from)! - rank.get(b.from)! || a.order - b.order);
  }

  return {
    async walk(q) {
      const lineage = await lineages.of(q.threadId);
      const own = isOwn(lineage);
      const [start] = own
        ? (
            await rawQuery(
              weft,
              `SELECT ${N.sequence} FROM ${node.sql} WHERE ${N.threadId} = ? AND ${N.id} = ?`,
              [q.threadId, q.id],
            )
          ).map((row) => node.decode(row, weft.provider))
        : await nodesById(weft, lineage, [q.id]);
      if (start === undefined) return [];
      const startSeq = start.sequence;
      const depth = bounded(q.depth, DEFAULT_WALK_DEPTH, MAX_WALK_DEPTH);
      const limit = bounded(q.limit, DEFAULT_WALK_LIMIT, MAX_WALK_LIMIT);
      const kinds = q.kinds === undefined ? undefined : new Set(q.kinds);
      const visited = new Set<number>([startSeq]);
      const out: string[] = [];
      let level = [startSeq];
      for (let d = 1; d <= depth && level.length > 0 && out.length < limit; d++) {
        const next: Array<{ seq: number; id: string; kind: string }> = [];
        const up = q.direction === 'ancestors';
        const reachedNodes = own
          ? await step(q.threadId, level, up)
          : await lineageStep(lineage, level, up);
        for (const reached of reachedNodes) {
          if (visited.has(reached.seq) || visited.size >= MAX_WALK_VISITS) continue;
          visited.add(reached.seq);
          next.push(reached);
        }
        next.sort((a, b) => a.seq - b.seq);
        for (const n of next) {
          if (kinds !== undefined && !kinds.has(n.kind)) continue;
          out.push(n.id);
          if (out.length >= limit) break;
        }
        level = next.map((n) => n.seq);
      }
      return out;
    },
  };
}
