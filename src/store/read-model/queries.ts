/**
 * Read queries over the read-model tables, for the API. Every function that takes a list of keys
 * answers them with a bounded number of statements (one per thread touched, at most), so a
 * DataLoader batch is a bounded number of database calls whatever its size. Rows come back as
 * JSON text, payload columns opened with the codec; log entries as read by log-reads.ts (the
 * text as appended, packed entries whole); the engine's read API (src/engine/reads.ts) parses them.
 */
import { type FieldCodec, PLAIN_CODEC } from '../crypto/index.js';
import { createPrisma, type WeftPrisma } from '../prisma/index.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import { MAX_LOG_INDEX, readLogEntries } from './log-reads.js';
import type { LogEntryRow, NodeRow, ResourceHeadRow, RunRow, ThreadRow } from './rows.js';

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

type PrismaNode = Omit<NodeRow, 'parentIds'> & {
  parents: Array<{ parent: { id: string }; position: number }>;
};

const withParentIds = ({ parents, ...row }: PrismaNode): NodeWithParents => ({
  ...row,
  parentIds: [...parents].sort((a, b) => a.position - b.position).map((p) => p.parent.id),
});

/** Edges name nodes by sequence; the parent's id comes through the relation. */
const PARENTS = {
  parents: { select: { position: true, parent: { select: { id: true } } } },
} as const;

export function openReadQueries(databaseUrl: string, codec: FieldCodec = PLAIN_CODEC): ReadQueries {
  return createReadQueries(createPrisma(databaseUrl), true, codec);
}

/**
 * Read queries on a client; `owned`: `close()` disconnects it. `codec` opens the payload columns
 * (encryption at rest: pass the thread store's `codec`).
 */
export function createReadQueries(
  weft: WeftPrisma,
  owned = false,
  codec: FieldCodec = PLAIN_CODEC,
): ReadQueries {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  const withParents = (row: PrismaNode): NodeWithParents => {
    const node = withParentIds(row);
    node.payload = codec.openText(node.payload);
    return node;
  };
  const openRun = (run: RunRow): RunRow => ({
    ...run,
    goal: codec.openText(run.goal),
    state: codec.openText(run.state),
  });
  const nodesIn = async (threadId: string, ids: readonly string[]) =>
    (
      await prisma.node.findMany({
        where: { threadId, id: { in: [...new Set(ids)] } },
        include: PARENTS,
      })
    ).map(withParents);

  return {
    threads: (ids) => prisma.thread.findMany({ where: { id: { in: [...new Set(ids)] } } }),

    listThreads: (q) =>
      prisma.thread.findMany({
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
      const rows = await prisma.node.findMany({
        where: {
          threadId: q.threadId,
          ...(q.afterSequence === undefined ? {} : { sequence: { gt: q.afterSequence } }),
          ...(q.kinds === undefined ? {} : { kind: { in: [...q.kinds] } }),
        },
        include: PARENTS,
        orderBy: { sequence: 'asc' },
        take: q.take,
      });
      return rows.map(withParents);
    },

    nodeCount: (threadId) => prisma.node.count({ where: { threadId } }),

    async children(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(async ([threadId, group]) => {
          const edges = await prisma.nodeParent.findMany({
            where: { threadId, parent: { id: { in: [...new Set(group.map((k) => k.id))] } } },
            select: { parent: { select: { id: true } }, child: { include: PARENTS } },
            orderBy: [{ parentSeq: 'asc' }, { childSeq: 'asc' }],
          });
          return edges.map((e) => ({ ...withParents(e.child), parentId: e.parent.id }));
        }),
      );
      return found.flat();
    },

    async resourceVersions(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(([threadId, group]) =>
          prisma.node.findMany({
            where: { threadId, resourceKey: { in: [...new Set(group.map((k) => k.resourceKey))] } },
            include: PARENTS,
            orderBy: { sequence: 'asc' },
          }),
        ),
      );
      return found.flat().map(withParents);
    },

    async resourceHeads(threadId, filter = {}) {
      const rows = await prisma.resourceHead.findMany({
        where: {
          threadId,
          ...(filter.semantic === undefined
            ? {}
            : filter.semantic
              ? { semanticType: { not: null } }
              : {}),
          ...(filter.type === undefined ? {} : { semanticType: filter.type }),
          ...(filter.key === undefined ? {} : { semanticKey: filter.key }),
        },
        include: { node: { include: PARENTS } },
      });
      return rows
        .map(({ node, ...head }) => ({ ...head, node: withParents(node) }))
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
          prisma.run.findMany({
            where: { threadId, id: { in: [...new Set(group.map((k) => k.id))] } },
          }),
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
