/**
 * Read queries over the read-model tables, for the API. Every function that takes a list of keys
 * answers them with a few statements per thread touched and per KEYS_PER_STATEMENT keys, so a
 * DataLoader batch of any size is a bounded number of database calls, each under the driver's
 * bound-parameter limit. Rows come back as
 * JSON text, client-supplied columns opened with the codec (sealed-rows.ts); log entries as read
 * by log-reads.ts (the text as appended, packed entries whole); the engine's read API
 * (src/engine/reads.ts) parses them. With a key, a lookup by a resource key or memory type or
 * key matches the sealed value and, for rows written before it was sealed, the plain one.
 */
import { Prisma } from '../../generated/prisma-sqlite/client.js';
import { type FieldCodec, PLAIN_CODEC } from '../crypto/index.js';
import { createPrisma, type WeftPrisma } from '../prisma/index.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import { MAX_LOG_INDEX, readLogEntries } from './log-reads.js';
import type { LogEntryRow, NodeRow, ResourceHeadRow, RunRow, ThreadRow } from './rows.js';
import { LABEL, openHead, openNode, openThread } from './sealed-rows.js';

/** A node row with its parents in position order. */
export interface NodeWithParents extends NodeRow {
  parentIds: string[];
}

export interface NodeKey {
  threadId: string;
  id: string;
}

export interface ThreadListQuery {
  /** Only threads of this tenant (undefined: every tenant, for system callers). */
  tenantId: string | undefined;
  /** Rows to return (the caller asks for one more to learn whether a next page exists). */
  take: number;
  /** Keyset cursor: the (createdAt, id) of the last row of the previous page. */
  after?: { createdAt: Date; id: string } | undefined;
  forkedFromId?: string | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
}

export interface NodePageQuery {
  threadId: string;
  take: number;
  /** Nodes with a sequence greater than this. */
  afterSequence?: number | undefined;
  kinds?: readonly string[] | undefined;
}

export interface RunListQuery {
  /** Only runs of this tenant (undefined: every tenant, for system callers). */
  tenantId: string | undefined;
  take: number;
  after?: { createdAt: Date; threadId: string; id: string } | undefined;
  threadId?: string | undefined;
  statuses?: readonly string[] | undefined;
}

/** The run rows with this id and the fork source of each holding thread. */
export interface RunPlace {
  threadId: string;
  forkedFromId: string | null;
  tenantId: string;
}

export interface ReadQueries {
  threads(ids: readonly string[]): Promise<ThreadRow[]>;
  listThreads(query: ThreadListQuery): Promise<ThreadRow[]>;
  nodes(keys: readonly NodeKey[]): Promise<NodeWithParents[]>;
  nodePage(query: NodePageQuery): Promise<NodeWithParents[]>;
  nodeCount(threadId: string): Promise<number>;
  /** Children of each key (a child row carries `parentId` = the key's id). */
  children(keys: readonly NodeKey[]): Promise<Array<NodeWithParents & { parentId: string }>>;
  /** Every version of each resource key, oldest first. */
  resourceVersions(
    keys: ReadonlyArray<{ threadId: string; resourceKey: string }>,
  ): Promise<NodeWithParents[]>;
  resourceHeads(
    threadId: string,
    filter?: { semantic?: boolean; type?: string; key?: string },
  ): Promise<Array<ResourceHeadRow & { node: NodeWithParents }>>;
  entries(threadId: string, afterIndex: number, take: number): Promise<LogEntryRow[]>;
  runs(keys: ReadonlyArray<{ threadId: string; id: string }>): Promise<RunRow[]>;
  runPlaces(runId: string): Promise<RunPlace[]>;
  listRuns(query: RunListQuery): Promise<RunRow[]>;
  close(): Promise<void>;
}

/** Keys grouped by thread, preserving first-seen order. */
function byThread<K extends { threadId: string }>(keys: readonly K[]): Map<string, K[]> {
  const groups = new Map<string, K[]>();
  for (const key of keys) {
    const group = groups.get(key.threadId);
    if (group === undefined) groups.set(key.threadId, [key]);
    else group.push(key);
  }
  return groups;
}

/**
 * Keys per statement. A statement binds one value per key (two for a (thread, sequence) pair),
 * and the SQLite driver refuses a statement with more than 999 bound values, so every key list
 * is cut into chunks of this size; relations are read by hand (never Prisma `include`, whose
 * follow-up query binds one pair per parent row without a bound).
 */
export const KEYS_PER_STATEMENT = 400;

/**
 * Rows one statement of a node page reads. On SQLite a statement runs on the event loop from
 * start to end, so a 1,000-row page is read in slices with other clients' turns in between.
 */
export const ROWS_PER_STATEMENT = 250;

/** Lets every other ready callback run before going on (SQLite reads hold the event loop). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `keys` in chunks of KEYS_PER_STATEMENT, each run by `query` on its own turn, results concatenated. */
async function chunked<K, R>(
  keys: readonly K[],
  query: (chunk: K[]) => Promise<R[]>,
): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
    if (i > 0) await nextTurn();
    out.push(...(await query(keys.slice(i, i + KEYS_PER_STATEMENT))));
  }
  return out;
}

const bySequence = (a: { sequence: number }, b: { sequence: number }) => a.sequence - b.sequence;

export function openReadQueries(databaseUrl: string, codec: FieldCodec = PLAIN_CODEC): ReadQueries {
  return createReadQueries(createPrisma(databaseUrl), true, codec);
}

/**
 * Read queries on a client; `owned`: `close()` disconnects it. `codec` opens the client-supplied
 * columns (encryption at rest: pass the thread store's `codec`).
 */
export function createReadQueries(
  weft: WeftPrisma,
  owned = false,
  codec: FieldCodec = PLAIN_CODEC,
): ReadQueries {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  const open = (row: NodeRow, parentIds: string[]): NodeWithParents =>
    codec.encrypted
      ? { ...openNode(codec, row), parentIds }
      : { ...row, payload: codec.openText(row.payload), parentIds };
  const openThreads = (rows: ThreadRow[]): ThreadRow[] =>
    codec.encrypted ? rows.map((row) => openThread(codec, row)) : rows;
  /** The parent ids of nodes of one thread, in position order, keyed by child sequence. */
  const parentIdsOf = async (threadId: string, sequences: readonly number[]) => {
    const edges = await chunked(sequences, (chunk) =>
      prisma.$queryRaw<
        Array<{ child_seq: number | bigint; position: number | bigint; id: string }>
      >(
        Prisma.sql`SELECT e."child_seq", e."position", p."id" FROM "node_parent" e
          JOIN "node" p ON p."thread_id" = e."thread_id" AND p."sequence" = e."parent_seq"
          WHERE e."thread_id" = ${threadId} AND e."child_seq" IN (${Prisma.join(chunk)})`,
      ),
    );
    const byChild = new Map<number, Array<{ position: number; id: string }>>();
    for (const e of edges) {
      const child = Number(e.child_seq);
      const list = byChild.get(child);
      const edge = { position: Number(e.position), id: e.id };
      if (list === undefined) byChild.set(child, [edge]);
      else list.push(edge);
    }
    return (sequence: number) =>
      (byChild.get(sequence) ?? []).sort((a, b) => a.position - b.position).map((e) => e.id);
  };
  /** Node rows of one thread with their parent ids (one edge query per chunk of rows). */
  const withParents = async (threadId: string, rows: readonly NodeRow[]) => {
    const parents = await parentIdsOf(
      threadId,
      rows.map((r) => r.sequence),
    );
    return rows.map((r) => open(r, parents(r.sequence)));
  };
  const openRun = (run: RunRow): RunRow => ({
    ...run,
    goal: codec.openText(run.goal),
    state: codec.openText(run.state),
  });
  const nodesIn = async (threadId: string, ids: readonly string[]) =>
    withParents(
      threadId,
      await chunked([...new Set(ids)], (chunk) =>
        prisma.node.findMany({ where: { threadId, id: { in: chunk } } }),
      ),
    );

  return {
    threads: async (ids) =>
      openThreads(
        await chunked([...new Set(ids)], (chunk) =>
          prisma.thread.findMany({ where: { id: { in: chunk } } }),
        ),
      ),

    listThreads: async (q) =>
      openThreads(
        await prisma.thread.findMany({
          where: {
            AND: [
              q.tenantId === undefined ? {} : { tenantId: q.tenantId },
              q.forkedFromId === undefined ? {} : { forkedFromId: q.forkedFromId },
              q.createdAfter === undefined ? {} : { createdAt: { gt: q.createdAfter } },
              q.createdBefore === undefined ? {} : { createdAt: { lt: q.createdBefore } },
              q.after === undefined
                ? {}
                : {
                    OR: [
                      { createdAt: { gt: q.after.createdAt } },
                      { createdAt: q.after.createdAt, id: { gt: q.after.id } },
                    ],
                  },
            ],
          },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          take: q.take,
        }),
      ),

    async nodes(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(([threadId, group]) =>
          nodesIn(
            threadId,
            group.map((k) => k.id),
          ),
        ),
      );
      return found.flat();
    },

    async nodePage(q) {
      const rows: NodeRow[] = [];
      let after = q.afterSequence;
      while (rows.length < q.take) {
        if (rows.length > 0) await nextTurn();
        const take = Math.min(ROWS_PER_STATEMENT, q.take - rows.length);
        const slice = await prisma.node.findMany({
          where: {
            threadId: q.threadId,
            ...(after === undefined ? {} : { sequence: { gt: after } }),
            ...(q.kinds === undefined ? {} : { kind: { in: [...q.kinds] } }),
          },
          orderBy: { sequence: 'asc' },
          take,
        });
        rows.push(...slice);
        if (slice.length < take) break;
        after = slice.at(-1)!.sequence;
      }
      await nextTurn();
      return withParents(q.threadId, rows);
    },

    nodeCount: (threadId) => prisma.node.count({ where: { threadId } }),

    async children(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(async ([threadId, group]) => {
          const edges = await chunked([...new Set(group.map((k) => k.id))], (chunk) =>
            prisma.$queryRaw<
              Array<{ parent_id: string; parent_seq: number | bigint; child_seq: number | bigint }>
            >(
              Prisma.sql`SELECT p."id" AS "parent_id", e."parent_seq", e."child_seq" FROM "node_parent" e
                JOIN "node" p ON p."thread_id" = e."thread_id" AND p."sequence" = e."parent_seq"
                WHERE e."thread_id" = ${threadId} AND p."id" IN (${Prisma.join(chunk)})`,
            ),
          );
          const ordered = edges
            .map((e) => ({
              parentId: e.parent_id,
              parentSeq: Number(e.parent_seq),
              childSeq: Number(e.child_seq),
            }))
            .sort((a, b) => a.parentSeq - b.parentSeq || a.childSeq - b.childSeq);
          const rows = await chunked([...new Set(ordered.map((e) => e.childSeq))], (chunk) =>
            prisma.node.findMany({ where: { threadId, sequence: { in: chunk } } }),
          );
          const children = new Map(
            (await withParents(threadId, rows)).map((n) => [n.sequence, n] as const),
          );
          return ordered.map((e) => ({ ...children.get(e.childSeq)!, parentId: e.parentId }));
        }),
      );
      return found.flat();
    },

    async resourceVersions(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(async ([threadId, group]) => {
          // With a key each key is looked for in two forms: 2 × 400 + 1 values, still under 999.
          const rows = await chunked([...new Set(group.map((k) => k.resourceKey))], (chunk) =>
            prisma.node.findMany({
              where: {
                threadId,
                resourceKey: {
                  in: codec.encrypted
                    ? chunk.flatMap((key) => codec.equalForms(LABEL.nodeResourceKey, key))
                    : chunk,
                },
              },
            }),
          );
          return withParents(threadId, rows.sort(bySequence));
        }),
      );
      return found.flat();
    },

    async resourceHeads(threadId, filter = {}) {
      const stored = await prisma.resourceHead.findMany({
        where: {
          threadId,
          ...(filter.semantic === undefined
            ? {}
            : filter.semantic
              ? { semanticType: { not: null } }
              : {}),
          ...(filter.type === undefined
            ? {}
            : codec.encrypted
              ? { semanticType: { in: codec.equalForms(LABEL.semanticType, filter.type) } }
              : { semanticType: filter.type }),
          ...(filter.key === undefined
            ? {}
            : codec.encrypted
              ? { semanticKey: { in: codec.equalForms(LABEL.semanticKey, filter.key) } }
              : { semanticKey: filter.key }),
        },
      });
      const rows = codec.encrypted ? stored.map((row) => openHead(codec, row)) : stored;
      const nodes = new Map(
        (
          await nodesIn(
            threadId,
            rows.map((h) => h.nodeId),
          )
        ).map((n) => [n.id, n] as const),
      );
      return rows
        .map((head) => ({ ...head, node: nodes.get(head.nodeId)! }))
        .sort((a, b) => a.node.sequence - b.node.sequence);
    },

    entries: async (threadId, afterIndex, take) =>
      (
        await readLogEntries(prisma, weft.provider, codec, threadId, {
          from: Math.max(0, afterIndex + 1),
          to: MAX_LOG_INDEX,
          limit: take,
        })
      ).map((e) => ({
        threadId,
        index: e.index,
        entryId: e.entryId,
        type: e.type,
        recordedAt: e.recordedAt,
        entry: e.appended,
      })),

    async runs(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(([threadId, group]) =>
          chunked([...new Set(group.map((k) => k.id))], (chunk) =>
            prisma.run.findMany({ where: { threadId, id: { in: chunk } } }),
          ),
        ),
      );
      return found.flat().map(openRun);
    },

    async runPlaces(runId) {
      const rows = await prisma.run.findMany({
        where: { id: runId },
        select: { threadId: true, thread: { select: { forkedFromId: true, tenantId: true } } },
      });
      return rows.map((r) => ({
        threadId: r.threadId,
        forkedFromId: r.thread.forkedFromId,
        tenantId: r.thread.tenantId,
      }));
    },

    listRuns: async (q) =>
      (
        await prisma.run.findMany({
          where: {
            AND: [
              q.tenantId === undefined ? {} : { tenantId: q.tenantId },
              q.threadId === undefined ? {} : { threadId: q.threadId },
              q.statuses === undefined ? {} : { status: { in: [...q.statuses] } },
              q.after === undefined
                ? {}
                : {
                    OR: [
                      { createdAt: { gt: q.after.createdAt } },
                      { createdAt: q.after.createdAt, threadId: { gt: q.after.threadId } },
                      {
                        createdAt: q.after.createdAt,
                        threadId: q.after.threadId,
                        id: { gt: q.after.id },
                      },
                    ],
                  },
            ],
          },
          orderBy: [{ createdAt: 'asc' }, { threadId: 'asc' }, { id: 'asc' }],
          take: q.take,
        })
      ).map(openRun),

    async close() {
      if (owned) await prisma.$disconnect();
    },
  };
}
