/**
 * A node's children, read so that a node with many children never costs a request more than
 * one page of rows: the edges (two numbers each) are read first, counted and cut, and only the
 * children a list or page shows are read as nodes.
 */
import type { ReadQueries } from '../store/read-model/queries.js';
import type { NodeKey, NodeView } from './reads.js';
import { toNodeView } from './views.js';

/** Some children of a node, in sequence order, and how many it has in all. */
export interface ChildList {
  nodes: NodeView[];
  total: number;
}

export interface ChildPageQuery extends NodeKey {
  /** Children after this sequence (before it when `backward`), nearest first. */
  cursor?: number | undefined;
  backward?: boolean | undefined;
  take: number;
}

const keyOf = (threadId: string, id: string) => `${threadId}\u0000${id}`;

export function createChildReads(q: ReadQueries) {
  /** The nodes at `sequences` of each thread, by thread and sequence. */
  async function nodesAt(wanted: Map<string, number[]>): Promise<Map<string, NodeView>> {
    const found = new Map<string, NodeView>();
    for (const [threadId, sequences] of wanted) {
      if (sequences.length === 0) continue;
      for (const row of await q.nodesAt(threadId, sequences)) {
        found.set(keyOf(threadId, String(row.sequence)), toNodeView(row));
      }
    }
    return found;
  }

  return {
    /**
     * The children of each key, oldest first; a key with more than `limit` children gets its
     * total and no nodes (its rows are never read).
     */
    async children(keys: readonly NodeKey[], limit: number): Promise<ChildList[]> {
      const edges = await q.childEdges(keys);
      const byParent = new Map<string, number[]>();
      for (const e of edges) {
        const key = keyOf(e.threadId, e.parentId);
        const list = byParent.get(key);
        if (list === undefined) byParent.set(key, [e.childSeq]);
        else list.push(e.childSeq);
      }
      const wanted = new Map<string, number[]>();
      for (const k of keys) {
        const seqs = byParent.get(keyOf(k.threadId, k.id)) ?? [];
        if (seqs.length > limit) continue;
        wanted.set(k.threadId, [...(wanted.get(k.threadId) ?? []), ...seqs]);
      }
      const nodes = await nodesAt(wanted);
      return keys.map((k) => {
        const seqs = byParent.get(keyOf(k.threadId, k.id)) ?? [];
        if (seqs.length > limit) return { nodes: [], total: seqs.length };
        const list = seqs.map((s) => nodes.get(keyOf(k.threadId, String(s))));
        return { nodes: list.filter((n) => n !== undefined), total: seqs.length };
      });
    },

    /** One page of a node's children in the direction it is read, and how many there are. */
    async childPage(query: ChildPageQuery): Promise<ChildList> {
      const edges = await q.childEdges([{ threadId: query.threadId, id: query.id }]);
      const { cursor, backward, take } = query;
      let seqs = edges.map((e) => e.childSeq);
      if (backward === true)
        seqs = seqs.filter((s) => cursor === undefined || s < cursor).reverse();
      else if (cursor !== undefined) seqs = seqs.filter((s) => s > cursor);
      const page = seqs.slice(0, take);
      const nodes = await nodesAt(new Map([[query.threadId, page]]));
      const list = page.map((s) => nodes.get(keyOf(query.threadId, String(s))));
      return { nodes: list.filter((n) => n !== undefined), total: edges.length };
    },
  };
}
