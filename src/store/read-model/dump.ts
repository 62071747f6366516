/**
 * The read-model rows of threads, normalised for comparison (Dates as ISO text, node edges by id,
 * rows sorted by key): for tests and diagnostics (`weft replay`).
 */
import { type FieldCodec, keyringOf } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import * as tables from '../tables/index.js';
import { type Lineages, nodeSpans } from './lineage.js';
import { asSeenBy } from './lineage-nodes.js';
import { openHead, openNode, openRun, openSpend, openThread } from './sealed-rows.js';
import { marks, selectRows } from './select.js';
import { openByThread } from './thread-keys.js';

export type ReadModelDump = Record<
  'thread' | 'node' | 'node_parent' | 'resource_head' | 'run' | 'run_spend',
  Array<Record<string, unknown>>
>;

const byKeys =
  (...keys: string[]) =>
  (a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const key of keys) {
      const x = String(a[key]);
      const y = String(b[key]);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };

const plain = (row: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]),
  );

/** Rows of `table` of the given threads (by `field`), in chunks under the parameter limit. */
async function rowsOf<Row>(
  weft: WeftPrisma,
  table: Parameters<typeof selectRows<Row>>[1],
  field: string,
  threadIds: readonly string[] | undefined,
): Promise<Row[]> {
  if (threadIds === undefined) return selectRows(weft, table, '', []);
  const out: Row[] = [];
  for (let i = 0; i < threadIds.length; i += 400) {
    const part = threadIds.slice(i, i + 400);
    out.push(
      ...(await selectRows(weft, table, `${table.c[field]} IN (${marks(part.length)})`, part)),
    );
  }
  return out;
}

/**
 * The node and edge rows a thread reads from its shared history (lineage.ts), as it sees them:
 * the rows a fork that copied its prefix would hold.
 */
async function sharedRows(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineages: Lineages,
  threads: readonly tables.ThreadRow[],
): Promise<{ node: tables.NodeRow[]; nodeParent: tables.NodeParentRow[] }> {
  const out = { node: [] as tables.NodeRow[], nodeParent: [] as tables.NodeParentRow[] };
  const N = tables.node.c;
  const E = tables.nodeParent.c;
  for (const t of threads) {
    if (t.baseThreadId === null) continue;
    const lineage = await lineages.of(t.id);
    for (const span of nodeSpans(lineage).filter((s) => s.threadId !== t.id)) {
      const bounds = [span.threadId, span.fromSeq, span.toSeq];
      const nodes = await selectRows(
        weft,
        tables.node,
        `${N.threadId} = ? AND ${N.sequence} > ? AND ${N.sequence} <= ?`,
        bounds,
      );
      // Opened under the key of the thread storing them, before they take the fork's id.
      const opened = await openByThread(codec, nodes, (n) => n.threadId, openNode);
      out.node.push(...(await asSeenBy(weft, t.id, opened)));
      const edges = await selectRows(
        weft,
        tables.nodeParent,
        `${E.threadId} = ? AND ${E.childSeq} > ? AND ${E.childSeq} <= ?`,
        bounds,
      );
      out.nodeParent.push(...edges.map((e) => ({ ...e, threadId: t.id })));
    }
  }
  return out;
}

/** Every thread's read models as it sees them (its shared history included), by id. */
export async function dumpReadModels(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineages: Lineages,
  threadIds?: readonly string[],
): Promise<ReadModelDump> {
  const [thread, node, nodeParent, resourceHead, run, runSpend] = await Promise.all([
    rowsOf(weft, tables.thread, 'id', threadIds),
    rowsOf(weft, tables.node, 'threadId', threadIds),
    rowsOf(weft, tables.nodeParent, 'threadId', threadIds),
    rowsOf(weft, tables.resourceHead, 'threadId', threadIds),
    rowsOf(weft, tables.run, 'threadId', threadIds),
    rowsOf(weft, tables.runSpend, 'threadId', threadIds),
  ]);
  const own = await openByThread(codec, node, (n) => n.threadId, openNode);
  const shared = await sharedRows(weft, codec, lineages, thread);
  node.push(...shared.node);
  nodeParent.push(...shared.nodeParent);
  const keys = keyringOf(codec);
  const owners = [...resourceHead, ...run, ...runSpend].map((r) => r.threadId);
  await keys.load([...thread.map((t) => t.id), ...owners]);
  const idOf = new Map(node.map((n) => [`${n.threadId}\u0000${n.sequence}`, n.id]));
  const edges = nodeParent.map((p) => ({
    threadId: p.threadId,
    childId: idOf.get(`${p.threadId}\u0000${p.childSeq}`),
    parentId: idOf.get(`${p.threadId}\u0000${p.parentSeq}`),
    position: p.position,
  }));
  return {
    // Where a thread's rows are is storage, not read model: a copied fork has none of it.
    thread: thread
      .map((t) => {
        // Nor are retention and the salt secret: they are not in the log, so a rebuilt row has
        // neither.
        const { baseThreadId, baseLogLength, baseNodeCount, deletedAt, expiresAt, ...rest } = plain(
          openThread(keys.forThread(t.id), t),
        );
        const { payloadSalt, ...row } = rest;
        return row;
      })
      .sort(byKeys('id')),
    node: [...own, ...shared.node].map((n) => plain(n)).sort(byKeys('threadId', 'id')),
    node_parent: edges.sort(byKeys('threadId', 'childId', 'parentId')),
    resource_head: resourceHead
      .map((h) => plain(openHead(keys.forThread(h.threadId), h)))
      .sort(byKeys('threadId', 'resourceKey')),
    run: run
      .map((r) => plain(openRun(keys.forThread(r.threadId), r)))
      .sort(byKeys('threadId', 'id')),
    run_spend: runSpend
      .map((s) => plain(openSpend(keys.forThread(s.threadId), s)))
      .sort(byKeys('threadId', 'runId', 'dimension', 'key')),
  };
}
