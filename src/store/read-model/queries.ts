/**
 * Read queries over the read-model tables, for the API. Every function that takes a list of keys
 * answers them with a few statements per thread touched and per KEYS_PER_STATEMENT keys, so a
 * DataLoader batch of any size is a bounded number of database calls, each under the driver's
 * bound-parameter limit. Rows come back as
 * JSON text, client-supplied columns opened with the codec (sealed-rows.ts); log entries as read
 * by log-reads.ts (the text as appended, packed entries whole); the read API
 * (src/reads/reads.ts) parses them. With a key, a lookup by a resource key or memory type or
 * key matches the sealed value and, for rows written before it was sealed, the plain one.
 */
import { type FieldCodec, keyringOf, PLAIN_CODEC } from '../crypto/index.js';
import { createPrisma, type WeftPrisma, type WeftPrismaOptions } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { node, nodeParent, resourceHead, run, thread } from '../tables/index.js';
import { type ChildQueries, createChildQueries } from './child-queries.js';
import { createFeedQueries, type FeedQueries } from './feed-queries.js';
import { createLineages, isOwn, type Lineages, nodeSpans, type Segment } from './lineage.js';
import {
  asSeenBy,
  nodesById,
  nodesBySequence,
  parentIdsInLineage,
  spanBounds,
} from './lineage-nodes.js';
import {
  createListQueries,
  type RunFilterQuery,
  type RunListQuery,
  type ThreadFilterQuery,
  type ThreadListQuery,
} from './list-queries.js';
import { type LogEntryHead, readLogEntries, readLogHeads, windowAfter } from './log-reads.js';
import type { LogEntryRow, NodeRow, ResourceHeadRow, RunRow, ThreadRow } from './rows.js';
import { LABEL, openHead, openNode, openRun, openThread } from './sealed-rows.js';
import {
  countRows,
  findRunLocations,
  marks,
  type RunLocation,
  selectRows,
  whereBuilder,
} from './select.js';
import { openByThread } from './thread-keys.js';
import { createWalkQueries, type WalkQueries } from './walk-queries.js';

export type {
  RunFilterQuery,
  RunListQuery,
  ThreadFilterQuery,
  ThreadListQuery,
  ThreadOrderField,
} from './list-queries.js';

/** A node row with its parents in position order. */
export interface NodeWithParents extends NodeRow {
  parentIds: string[];
}

export interface NodeKey {
  threadId: string;
  id: string;
}

/** Which nodes of a thread a page holds (and a count counts). */
export interface NodeFilterQuery {
  threadId: string;
  /** Nodes with a sequence greater than this. */
  afterSequence?: number | undefined;
  kinds?: readonly string[] | undefined;
  /** Only tainted nodes (true) or only untainted ones (false). */
  tainted?: boolean | undefined;
  /** Only nodes written by this run. */
  runId?: string | undefined;
  /** Only the versions of this resource key. */
  resourceKey?: string | undefined;
}

export interface NodePageQuery extends NodeFilterQuery {
  take: number;
  /** Newest first (by sequence). Default: oldest first. */
  descending?: boolean | undefined;
  /** Keyset cursor: the sequence the page starts after, in the page's direction. */
  cursor?: number | undefined;
}

/** The run rows with this id and the fork source of each holding thread. */
export type RunPlace = RunLocation;

export type {
  ActivityRow,
  ApprovalFilterQuery,
  ApprovalListQuery,
  ApprovalState,
  AuditFilterQuery,
  AuditListQuery,
} from './feed-queries.js';
export type { WalkQuery } from './walk-queries.js';

export interface ReadQueries extends FeedQueries, WalkQueries, ChildQueries {
  threads(ids: readonly string[]): Promise<ThreadRow[]>;
  listThreads(query: ThreadListQuery): Promise<ThreadRow[]>;
  /** How many threads match the filter. */
  countThreads(query: ThreadFilterQuery): Promise<number>;
  nodes(keys: readonly NodeKey[]): Promise<NodeWithParents[]>;
  nodePage(query: NodePageQuery): Promise<NodeWithParents[]>;
  nodeCount(threadId: string): Promise<number>;
  /** How many nodes of the thread match the filter. */
  countNodes(query: NodeFilterQuery): Promise<number>;
  /** The thread's nodes with these sequences (as the thread sees them), in sequence order. */
  nodesAt(threadId: string, sequences: readonly number[]): Promise<NodeWithParents[]>;
  /** Every version of each resource key, oldest first. */
  resourceVersions(
    keys: ReadonlyArray<{ threadId: string; resourceKey: string }>,
  ): Promise<NodeWithParents[]>;
  resourceHeads(
    threadId: string,
    filter?: { semantic?: boolean; type?: string; key?: string },
  ): Promise<Array<ResourceHeadRow & { node: NodeWithParents }>>;
  entries(threadId: string, afterIndex: number, take: number): Promise<LogEntryRow[]>;
  /** The same entries without their bodies: what a list of them shows, at a fraction of the read. */
  entryHeads(threadId: string, afterIndex: number, take: number): Promise<LogEntryHead[]>;
  runs(keys: ReadonlyArray<{ threadId: string; id: string }>): Promise<RunRow[]>;
  runPlaces(runId: string): Promise<RunPlace[]>;
  listRuns(query: RunListQuery): Promise<RunRow[]>;
  /** How many runs match the filter. */
  countRuns(query: RunFilterQuery): Promise<number>;
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

export type ReadQueriesSource = { databaseUrl: string } & WeftPrismaOptions;
export function openReadQueries(source: ReadQueriesSource, codec = PLAIN_CODEC): ReadQueries {
  const { databaseUrl, ...options } = source;
  return createReadQueries(createPrisma(databaseUrl, options), true, codec);
}

/**
 * What the node queries share: opening node rows, their parent ids, and the WHERE of a node
 * filter (client columns matched in the forms the thread's key stores them in).
 */
function createNodeAccess(weft: WeftPrisma, codec: FieldCodec, lineages: Lineages) {
  const N = node.c;
  const E = nodeParent.c;
  const keyring = keyringOf(codec);
  // Opened under the storing thread's data key, before asSeenBy gives shared rows the fork's id.
  const openNodes = (rows: readonly NodeRow[]) =>
    openByThread(codec, rows, (r) => r.threadId, openNode);
  const nodeRows = (where: string, values: readonly unknown[], tail = '') =>
    selectRows(weft, node, where, values, tail);
  /** The parent ids of nodes of one thread, in position order, keyed by child sequence. */
  const parentIdsOf = async (threadId: string, sequences: readonly number[]) => {
    const lineage = await lineages.of(threadId);
    if (!isOwn(lineage)) return parentIdsInLineage(weft, lineage, sequences);
    const edges = await chunked(sequences, (chunk) =>
      rawQuery(
        weft,
        `SELECT e.${E.childSeq}, e.${E.position}, p.${N.id} FROM ${nodeParent.sql} e
          JOIN ${node.sql} p ON p.${N.threadId} = e.${E.threadId} AND p.${N.sequence} = e.${E.parentSeq}
          WHERE e.${E.threadId} = ? AND e.${E.childSeq} IN (${marks(chunk.length)})`,
        [threadId, ...chunk],
      ),
    );
    const byChild = new Map<number, Array<{ position: number; id: string }>>();
    for (const row of edges) {
      const e = nodeParent.decode(row, weft.provider);
      const list = byChild.get(e.childSeq);
      const edge = { position: e.position, id: node.decode(row, weft.provider).id };
      if (list === undefined) byChild.set(e.childSeq, [edge]);
      else list.push(edge);
    }
    return (sequence: number) =>
      (byChild.get(sequence) ?? []).sort((a, b) => a.position - b.position).map((e) => e.id);
  };
  /** Opened node rows of one thread with their parent ids (one edge query per chunk of rows). */
  const withParents = async (threadId: string, rows: readonly NodeRow[]) => {
    const parents = await parentIdsOf(
      threadId,
      rows.map((r) => r.sequence),
    );
    return rows.map((r): NodeWithParents => ({ ...r, parentIds: parents(r.sequence) }));
  };
  const nodesIn = async (threadId: string, ids: readonly string[]) => {
    const lineage = await lineages.of(threadId);
    if (!isOwn(lineage)) {
      const rows = await openNodes(await nodesById(weft, lineage, ids));
      return withParents(threadId, await asSeenBy(weft, threadId, rows));
    }
    const rows = await chunked([...new Set(ids)], (chunk) =>
      nodeRows(`${N.threadId} = ? AND ${N.id} IN (${marks(chunk.length)})`, [threadId, ...chunk]),
    );
    return withParents(threadId, await openNodes(rows));
  };
  const conditions = whereBuilder;
  /** The WHERE of a node page's filter. */
  const nodeConditions = (q: NodeFilterQuery, span?: Segment) => {
    const w = conditions();
    if (span === undefined) w.add(`${N.threadId} = ?`, q.threadId);
    else {
      const bounds = spanBounds(span);
      w.add(bounds.sql, ...bounds.values);
    }
    if (q.afterSequence !== undefined) w.add(`${N.sequence} > ?`, q.afterSequence);
    if (q.kinds !== undefined) w.add(`${N.kind} IN (${marks(q.kinds.length)})`, ...q.kinds);
    if (q.tainted !== undefined) w.add(`${N.taint} IS ${q.tainted ? 'NOT ' : ''}NULL`);
    if (q.runId !== undefined) w.add(`${N.runId} = ?`, q.runId);
    if (q.resourceKey !== undefined) {
      const own = keyring.forThread(span?.threadId ?? q.threadId);
      const forms = own.equalForms(LABEL.nodeResourceKey, q.resourceKey);
      w.add(`${N.resourceKey} IN (${marks(forms.length)})`, ...forms);
    }
    return w;
  };
  return { weft, lineages, keyring, openNodes, nodeRows, withParents, nodesIn, nodeConditions };
}

type NodeAccess = ReturnType<typeof createNodeAccess>;

/** Nodes by id, by sequence, a page of a filter and its count, across a shared history. */
function createNodeQueries(
  access: NodeAccess,
): Pick<ReadQueries, 'nodes' | 'nodePage' | 'countNodes' | 'nodesAt'> {
  const N = node.c;
  const { weft, lineages, keyring, openNodes, nodeRows, withParents, nodesIn, nodeConditions } =
    access;
  return {
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
      if (q.kinds?.length === 0) return [];
      const rows: NodeRow[] = [];
      const direction = q.descending === true ? 'DESC' : 'ASC';
      const lineage = await lineages.of(q.threadId);
      await keyring.load([q.threadId, ...lineage.map((s) => s.threadId)]);
      // The stretches of a shared history in the page's order; a thread's own rows: one pass.
      const spans: Array<Segment | undefined> = isOwn(lineage) ? [undefined] : nodeSpans(lineage);
      if (direction === 'DESC') spans.reverse();
      for (const span of spans) {
        let cursor = q.cursor;
        while (rows.length < q.take) {
          if (rows.length > 0) await nextTurn();
          const take = Math.min(ROWS_PER_STATEMENT, q.take - rows.length);
          const w = nodeConditions(q, span);
          if (cursor !== undefined)
            w.add(`${N.sequence} ${direction === 'DESC' ? '<' : '>'} ?`, cursor);
          const slice = await nodeRows(
            w.where(),
            [...w.values, take],
            ` ORDER BY ${N.sequence} ${direction} LIMIT ?`,
          );
          rows.push(...slice);
          if (slice.length < take) break;
          cursor = slice.at(-1)!.sequence;
        }
      }
      await nextTurn();
      return withParents(q.threadId, await asSeenBy(weft, q.threadId, await openNodes(rows)));
    },

    async countNodes(q) {
      if (q.kinds?.length === 0) return 0;
      const lineage = await lineages.of(q.threadId);
      await keyring.load([q.threadId, ...lineage.map((s) => s.threadId)]);
      let total = 0;
      for (const span of isOwn(lineage) ? [undefined] : nodeSpans(lineage)) {
        const w = nodeConditions(q, span);
        total += await countRows(weft, node, w.where(), w.values);
      }
      return total;
    },

    async nodesAt(threadId, sequences) {
      const lineage = await lineages.of(threadId);
      const unique = [...new Set(sequences)];
      const rows = isOwn(lineage)
        ? await openNodes(
            await chunked(unique, (chunk) =>
              nodeRows(`${N.threadId} = ? AND ${N.sequence} IN (${marks(chunk.length)})`, [
                threadId,
                ...chunk,
              ]),
            ),
          )
        : await asSeenBy(
            weft,
            threadId,
            await openNodes(await nodesBySequence(weft, lineage, unique)),
          );
      return withParents(threadId, rows.sort(bySequence));
    },
  };
}

/** A thread's resource versions and heads (semantic memory included). */
function createResourceQueries(
  access: NodeAccess,
): Pick<ReadQueries, 'resourceVersions' | 'resourceHeads'> {
  const N = node.c;
  const { weft, lineages, keyring, openNodes, nodeRows, withParents, nodesIn } = access;
  const conditions = whereBuilder;
  return {
    async resourceVersions(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(async ([threadId, group]) => {
          const lineage = await lineages.of(threadId);
          await keyring.load(lineage.map((s) => s.threadId));
          const rows: NodeRow[] = [];
          for (const span of nodeSpans(lineage)) {
            const bounds = spanBounds(span);
            const own = keyring.forThread(span.threadId);
            // With a key each key is looked for in two forms: 2 × 400 + 3 values, under 999.
            const keys = [...new Set(group.map((k) => k.resourceKey))];
            rows.push(
              ...(await chunked(keys, (chunk) => {
                const forms = chunk.flatMap((key) => own.equalForms(LABEL.nodeResourceKey, key));
                return nodeRows(`${bounds.sql} AND ${N.resourceKey} IN (${marks(forms.length)})`, [
                  ...bounds.values,
                  ...forms,
                ]);
              })),
            );
          }
          return withParents(
            threadId,
            await asSeenBy(weft, threadId, await openNodes(rows.sort(bySequence))),
          );
        }),
      );
      return found.flat();
    },

    async resourceHeads(threadId, filter = {}) {
      const H = resourceHead.c;
      const w = conditions();
      w.add(`${H.threadId} = ?`, threadId);
      if (filter.semantic === true) w.add(`${H.semanticType} IS NOT NULL`);
      const match = (column: string, label: string, value: string | undefined) => {
        if (value === undefined) return;
        const forms = keyring.forThread(threadId).equalForms(label, value);
        w.add(`${column} IN (${marks(forms.length)})`, ...forms);
      };
      await keyring.load([threadId]);
      match(H.semanticType, LABEL.semanticType, filter.type);
      match(H.semanticKey, LABEL.semanticKey, filter.key);
      const stored = await selectRows(weft, resourceHead, w.where(), w.values);
      const rows = stored.map((row) => openHead(keyring.forThread(threadId), row));
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
  };
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
  const lineages = createLineages(weft);
  const access = createNodeAccess(weft, codec, lineages);
  const openThreads = (rows: ThreadRow[]) => openByThread(codec, rows, (r) => r.id, openThread);
  const openRuns = (rows: RunRow[]) => openByThread(codec, rows, (r) => r.threadId, openRun);
  const lists = createListQueries(weft, openThreads, openRuns);

  return {
    threads: async (ids) =>
      openThreads(
        await chunked([...new Set(ids)], (chunk) =>
          selectRows(
            weft,
            thread,
            `${thread.c.id} IN (${marks(chunk.length)}) AND ${thread.c.deletedAt} IS NULL`,
            chunk,
          ),
        ),
      ),

    ...lists,
    ...createFeedQueries(weft, codec),
    ...createWalkQueries(weft, lineages),
    ...createNodeQueries(access),
    ...createResourceQueries(access),

    async nodeCount(threadId) {
      const [row] = await selectRows(weft, thread, `${thread.c.id} = ?`, [threadId], '', [
        'nodeCount',
      ]);
      return row?.nodeCount ?? 0;
    },

    ...createChildQueries(weft, lineages, chunked),

    entries: async (threadId, afterIndex, take) => {
      const lineage = await lineages.of(threadId);
      const read = await readLogEntries(weft, codec, lineage, windowAfter(afterIndex, take));
      return read.map(({ index, entryId, type, recordedAt, appended }) => {
        return { threadId, index, entryId, type, recordedAt, entry: appended };
      });
    },

    entryHeads: async (threadId, afterIndex, take) =>
      readLogHeads(weft, codec, await lineages.of(threadId), windowAfter(afterIndex, take)),

    async runs(keys) {
      const groups = byThread(keys);
      const found = await Promise.all(
        [...groups].map(([threadId, group]) =>
          chunked([...new Set(group.map((k) => k.id))], (chunk) =>
            selectRows(
              weft,
              run,
              `${run.c.threadId} = ? AND ${run.c.id} IN (${marks(chunk.length)})`,
              [threadId, ...chunk],
            ),
          ),
        ),
      );
      return openRuns(found.flat());
    },

    runPlaces: (runId) => findRunLocations(weft, runId),

    async close() {
      if (owned) await weft.prisma.$disconnect();
    },
  };
}
