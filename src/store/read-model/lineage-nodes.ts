/**
 * Node and edge reads over a lineage (lineage.ts): each stretch is read from the thread holding
 * it, bounded by its sequences, and a shared row is seen as the reading thread has it — under
 * its id, with its own frontier and resource heads deciding `isFrontier` and `isCurrent` (the
 * holder's flags move on as the holder grows). Edges are read without joining on the thread:
 * a node of a fork may have a parent in its source's stretch.
 */
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { node, nodeParent, resourceHead, thread } from '../tables/index.js';
import { type Lineage, nodeSpans, type Segment, segmentOfSequence } from './lineage.js';
import type { NodeParentRow, NodeRow } from './rows.js';
import { marks, selectRows } from './select.js';

const CHUNK = 400;
const N = node.c;
const E = nodeParent.c;

function chunks<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) out.push(values.slice(i, i + CHUNK));
  return out;
}

/** `sequence` bounds of a stretch, for a WHERE (`alias.` prefix optional). */
export function spanBounds(s: Segment, alias = ''): { sql: string; values: unknown[] } {
  return {
    sql: `${alias}${N.threadId} = ? AND ${alias}${N.sequence} > ? AND ${alias}${N.sequence} <= ?`,
    values: [s.threadId, s.fromSeq, s.toSeq],
  };
}

/** Sequences grouped by the stretch holding them. */
function bySegment(lineage: Lineage, seqs: readonly number[]): Map<Segment, number[]> {
  const out = new Map<Segment, number[]>();
  for (const seq of new Set(seqs)) {
    const s = segmentOfSequence(lineage, seq);
    const list = out.get(s);
    if (list === undefined) out.set(s, [seq]);
    else list.push(seq);
  }
  return out;
}

/** Node rows by sequence, across the stretches (rows as stored: see `asSeenBy`). */
export async function nodesBySequence(
  weft: WeftPrisma,
  lineage: Lineage,
  seqs: readonly number[],
): Promise<NodeRow[]> {
  const out: NodeRow[] = [];
  for (const [s, list] of bySegment(lineage, seqs)) {
    for (const chunk of chunks(list)) {
      out.push(
        ...(await selectRows(
          weft,
          node,
          `${N.threadId} = ? AND ${N.sequence} IN (${marks(chunk.length)})`,
          [s.threadId, ...chunk],
        )),
      );
    }
  }
  return out;
}

/** Node rows by id, across the stretches (a stretch only answers for its own sequences). */
export async function nodesById(
  weft: WeftPrisma,
  lineage: Lineage,
  ids: readonly string[],
): Promise<NodeRow[]> {
  const out: NodeRow[] = [];
  const unique = [...new Set(ids)];
  for (const s of nodeSpans(lineage)) {
    const bounds = spanBounds(s);
    for (const chunk of chunks(unique)) {
      out.push(
        ...(await selectRows(weft, node, `${bounds.sql} AND ${N.id} IN (${marks(chunk.length)})`, [
          ...bounds.values,
          ...chunk,
        ])),
      );
    }
  }
  return out;
}

/** The parent edges of the given children. */
export async function edgesOfChildren(
  weft: WeftPrisma,
  lineage: Lineage,
  childSeqs: readonly number[],
): Promise<NodeParentRow[]> {
  const out: NodeParentRow[] = [];
  for (const [s, list] of bySegment(lineage, childSeqs)) {
    for (const chunk of chunks(list)) {
      out.push(
        ...(await selectRows(
          weft,
          nodeParent,
          `${E.threadId} = ? AND ${E.childSeq} IN (${marks(chunk.length)})`,
          [s.threadId, ...chunk],
        )),
      );
    }
  }
  return out;
}

/** The edges from the given parents to children the lineage sees. */
export async function edgesToParents(
  weft: WeftPrisma,
  lineage: Lineage,
  parentSeqs: readonly number[],
): Promise<NodeParentRow[]> {
  const out: NodeParentRow[] = [];
  const unique = [...new Set(parentSeqs)];
  for (const s of nodeSpans(lineage)) {
    // A child comes after its parents: a stretch ending before the first parent has none.
    if (unique.every((seq) => seq > s.toSeq)) continue;
    for (const chunk of chunks(unique)) {
      out.push(
        ...(await selectRows(
          weft,
          nodeParent,
          `${E.threadId} = ? AND ${E.childSeq} > ? AND ${E.childSeq} <= ? AND ${E.parentSeq} IN (${marks(chunk.length)})`,
          [s.threadId, s.fromSeq, s.toSeq, ...chunk],
        )),
      );
    }
  }
  return out;
}

/** Ids by sequence of the given nodes. */
export async function idsBySequence(
  weft: WeftPrisma,
  lineage: Lineage,
  seqs: readonly number[],
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const [s, list] of bySegment(lineage, seqs)) {
    for (const chunk of chunks(list)) {
      const rows = await rawQuery(
        weft,
        `SELECT ${N.sequence}, ${N.id} FROM ${node.sql} WHERE ${N.threadId} = ? AND ${N.sequence} IN (${marks(chunk.length)})`,
        [s.threadId, ...chunk],
      );
      for (const row of rows) {
        const n = node.decode(row, weft.provider);
        out.set(n.sequence, n.id);
      }
    }
  }
  return out;
}

/**
 * Rows as `threadId` sees them: a row of a shared stretch takes the thread's id, and its flags
 * from the thread's frontier and resource heads. The thread's own rows are returned as stored.
 */
export async function asSeenBy(
  weft: WeftPrisma,
  threadId: string,
  rows: readonly NodeRow[],
): Promise<NodeRow[]> {
  const shared = rows.filter((r) => r.threadId !== threadId);
  if (shared.length === 0) return [...rows];
  const [row] = await selectRows(weft, thread, `${thread.c.id} = ?`, [threadId], '', ['frontier']);
  const frontier = new Set<string>(JSON.parse(row?.frontier ?? '[]') as string[]);
  const keyed = shared.filter((r) => r.resourceKey !== null).map((r) => r.id);
  const heads = new Set<string>();
  const H = resourceHead.c;
  for (const chunk of chunks([...new Set(keyed)])) {
    const found = await selectRows(
      weft,
      resourceHead,
      `${H.threadId} = ? AND ${H.nodeId} IN (${marks(chunk.length)})`,
      [threadId, ...chunk],
      '',
      ['nodeId'],
    );
    for (const h of found) heads.add(h.nodeId);
  }
  return rows.map((r) =>
    r.threadId === threadId
      ? r
      : {
          ...r,
          threadId,
          isFrontier: frontier.has(r.id),
          isCurrent: r.resourceKey === null || heads.has(r.id),
        },
  );
}

/** The parent ids of nodes by child sequence, in position order (see queries.ts). */
export async function parentIdsInLineage(
  weft: WeftPrisma,
  lineage: Lineage,
  sequences: readonly number[],
): Promise<(sequence: number) => string[]> {
  const edges = await edgesOfChildren(weft, lineage, sequences);
  const ids = await idsBySequence(
    weft,
    lineage,
    edges.map((e) => e.parentSeq),
  );
  const byChild = new Map<number, NodeParentRow[]>();
  for (const e of edges) byChild.set(e.childSeq, [...(byChild.get(e.childSeq) ?? []), e]);
  return (sequence) =>
    (byChild.get(sequence) ?? [])
      .sort((a, b) => a.position - b.position)
      .map((e) => ids.get(e.parentSeq)!);
}
