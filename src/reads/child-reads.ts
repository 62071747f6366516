/**
 * A node's children, read so that a node with many children never costs a request more than
 * one page of rows: they are counted in the database first, and only the edges and nodes a list
 * or page shows are read.
 */
import type { ChildWindow } from '../store/read-model/child-queries.js';
import type { ReadQueries } from '../store/read-model/queries.js';
import { type NodeKey, type NodeView, toNodeView } from './views.js';

/** Some children of a node, in sequence order, and how many it has in all. */
export interface ChildList {
  nodes: NodeView[];
  total: number;
}

export interface ChildPageQuery extends NodeKey, ChildWindow {}

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
      const counts = new Map(
        (await q.childCounts(keys)).map((c) => [keyOf(c.threadId, c.parentId), c.count] as const),
      );
      const total = (k: NodeKey) => counts.get(keyOf(k.threadId, k.id)) ?? 0;
      const listed = keys.filter((k) => total(k) > 0 && total(k) <= limit);
      const edges = listed.length === 0 ? [] : await q.childEdges(listed);
      const byParent = new Map<string, number[]>();
      const wanted = new Map<string, number[]>();
      for (const e of edges) {
        const key = keyOf(e.threadId, e.parentId);
        byParent.set(key, [...(byParent.get(key) ?? []), e.childSeq]);
        wanted.set(e.threadId, [...(wanted.get(e.threadId) ?? []), e.childSeq]);
      }
      const nodes = await nodesAt(wanted);
      return keys.map((k) => {
        const seqs = byParent.get(keyOf(k.threadId, k.id)) ?? [];
        const list = seqs.map((s) => nodes.get(keyOf(k.threadId, String(s))));
        return { nodes: list.filter((n) => n !== undefined), total: total(k) };
      });
    },

    /** One page of a node's children in the direction it is read, and how many there are. */
    async childPage(query: ChildPageQuery): Promise<ChildList> {
      const { threadId, id } = query;
      const [counted] = await q.childCounts([{ threadId, id }]);
      const edges = await q.childWindow({ threadId, id }, query);
      const page = edges.map((e) => e.childSeq);
      const nodes = await nodesAt(new Map([[threadId, page]]));
      const list = page.map((s) => nodes.get(keyOf(threadId, String(s))));
      return { nodes: list.filter((n) => n !== undefined), total: counted?.count ?? 0 };
    },
  };
}
