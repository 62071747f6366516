/**
 * A node's children by their edges: how many each node has (counted in the database), and the
 * edges themselves, all of them or one window in sequence order. A node with 20,000 children is
 * counted and paged without bringing its 20,000 edges into the process (on SQLite a statement
 * runs on the event loop from start to end). A fork's shared stretches are read edge by edge.
 */
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { node, nodeParent } from '../tables/index.js';
import { isOwn, type Lineages } from './lineage.js';
import { edgesToParents, nodesById } from './lineage-nodes.js';
import { marks } from './select.js';

export interface ChildKey {
  threadId: string;
  id: string;
}

export interface ChildEdge {
  threadId: string;
  parentId: string;
  childSeq: number;
}

/** Children after `cursor` (before it when `backward`), nearest first, at most `take`. */
export interface ChildWindow {
  cursor?: number | undefined;
  backward?: boolean | undefined;
  take: number;
}

export interface ChildQueries {
  /** How many children each key has (keys with none are left out). */
  childCounts(
    keys: readonly ChildKey[],
  ): Promise<Array<{ parentId: string; threadId: string; count: number }>>;
  /** Each key's edges to its children, oldest child first. */
  childEdges(keys: readonly ChildKey[]): Promise<ChildEdge[]>;
  /** One window of one node's edges to its children, in the order the window reads. */
  childWindow(key: ChildKey, window: ChildWindow): Promise<ChildEdge[]>;
}

type Chunked = <K, R>(keys: readonly K[], query: (chunk: K[]) => Promise<R[]>) => Promise<R[]>;

export function createChildQueries(
  weft: WeftPrisma,
  lineages: Lineages,
  chunked: Chunked,
): ChildQueries {
  const N = node.c;
  const E = nodeParent.c;
  const from = `FROM ${nodeParent.sql} e
    JOIN ${node.sql} p ON p.${N.threadId} = e.${E.threadId} AND p.${N.sequence} = e.${E.parentSeq}`;

  /** A fork's edges from `ids` to the children it sees, read whole. */
  async function lineageEdges(threadId: string, ids: readonly string[]): Promise<ChildEdge[]> {
    const lineage = await lineages.of(threadId);
    const idOf = new Map(
      (await nodesById(weft, lineage, ids)).map((p) => [p.sequence, p.id] as const),
    );
    return (await edgesToParents(weft, lineage, [...idOf.keys()])).map((e) => ({
      threadId,
      parentId: idOf.get(e.parentSeq)!,
      childSeq: e.childSeq,
    }));
  }

  const byThread = (keys: readonly ChildKey[]) => {
    const groups = new Map<string, string[]>();
    for (const k of keys) groups.set(k.threadId, [...(groups.get(k.threadId) ?? []), k.id]);
    return [...groups].map(([threadId, ids]) => [threadId, [...new Set(ids)]] as const);
  };
  const ordered = (edges: ChildEdge[]) =>
    edges.sort((a, b) => a.childSeq - b.childSeq || (a.parentId < b.parentId ? -1 : 1));
  const edgeOf = (threadId: string, row: Record<string, unknown>): ChildEdge => ({
    threadId,
    parentId: node.decode(row, weft.provider).id,
    childSeq: nodeParent.decode(row, weft.provider).childSeq,
  });

  return {
    async childCounts(keys) {
      const found = await Promise.all(
        byThread(keys).map(async ([threadId, ids]) => {
          if (!isOwn(await lineages.of(threadId))) {
            const counts = new Map<string, number>();
            for (const e of await lineageEdges(threadId, ids)) {
              counts.set(e.parentId, (counts.get(e.parentId) ?? 0) + 1);
            }
            return [...counts].map(([parentId, count]) => ({ threadId, parentId, count }));
          }
          const rows = await chunked(ids, (chunk) =>
            rawQuery(
              weft,
              `SELECT p.${N.id}, COUNT(*) AS n ${from}
                WHERE e.${E.threadId} = ? AND p.${N.id} IN (${marks(chunk.length)}) GROUP BY p.${N.id}`,
              [threadId, ...chunk],
            ),
          );
          return rows.map((row) => ({
            threadId,
            parentId: node.decode(row, weft.provider).id,
            count: Number(row.n),
          }));
        }),
      );
      return found.flat();
    },

    async childEdges(keys) {
      const found = await Promise.all(
        byThread(keys).map(async ([threadId, ids]) => {
          if (!isOwn(await lineages.of(threadId))) return lineageEdges(threadId, ids);
          const rows = await chunked(ids, (chunk) =>
            rawQuery(
              weft,
              `SELECT p.${N.id}, e.${E.childSeq} ${from}
                WHERE e.${E.threadId} = ? AND p.${N.id} IN (${marks(chunk.length)})`,
              [threadId, ...chunk],
            ),
          );
          return rows.map((row) => edgeOf(threadId, row));
        }),
      );
      return ordered(found.flat());
    },

    async childWindow({ threadId, id }, { cursor, backward, take }) {
      if (!isOwn(await lineages.of(threadId))) {
        const all = ordered(await lineageEdges(threadId, [id]));
        if (backward === true) {
          return all
            .filter((e) => cursor === undefined || e.childSeq < cursor)
            .reverse()
            .slice(0, take);
        }
        return all.filter((e) => cursor === undefined || e.childSeq > cursor).slice(0, take);
      }
      const after =
        cursor === undefined ? '' : ` AND e.${E.childSeq} ${backward === true ? '<' : '>'} ?`;
      const rows = await rawQuery(
        weft,
        `SELECT p.${N.id}, e.${E.childSeq} ${from}
          WHERE e.${E.threadId} = ? AND p.${N.id} = ?${after}
          ORDER BY e.${E.childSeq} ${backward === true ? 'DESC' : 'ASC'} LIMIT ?`,
        [threadId, id, ...(cursor === undefined ? [] : [cursor]), take],
      );
      return rows.map((row) => edgeOf(threadId, row));
    },
  };
}
