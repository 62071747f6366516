/**
 * The read API the GraphQL layer uses: batch readers over the read models (SQL) and the engine's
 * in-memory thread state, returning parsed values. Batch functions answer in key order (a
 * missing key is `undefined`), which is what a DataLoader needs; each one is a bounded number of
 * database calls. No writes here: the engine's commands are the only writer.
 */
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { type NodeKind, normalizeSemanticKey, normalizeSemanticType } from '../core/graph/index.js';
import type { VerifyReport } from '../core/log/index.js';
import type { ProjectionInput } from '../core/projection/index.js';
import { textProblem } from '../core/text.js';
import type { ThreadSpend } from '../core/thread/index.js';
import { isStorable, runHomes, shownId, threadKey } from '../engine/tenancy.js';
import type { Engine, StateAt } from '../engine/types.js';
import {
  type ApprovalFilterQuery,
  type ApprovalListQuery,
  type AuditFilterQuery,
  type AuditListQuery,
  type NodeFilterQuery,
  type NodePageQuery,
  openReadQueries,
  type ReadQueries,
  type ReadQueriesSource as ReadsSource,
  type RunFilterQuery,
  type RunListQuery,
  type ThreadFilterQuery,
  type ThreadListQuery,
} from '../store/read-model/queries.js';
import type { NodeSearchQuery, SearchSnippet } from '../store/read-model/search-queries.js';
import { type ChildList, type ChildPageQuery, createChildReads } from './child-reads.js';
import { createStateReads, type ProjectionView } from './state-reads.js';
import {
  type ActivityView,
  type ApprovalView,
  type AuditView,
  type EventHeadView,
  type EventView,
  type MemoryView,
  type NodeKey,
  type NodeView,
  type RunView,
  type ThreadDiffView,
  type ThreadView,
  toApprovalView,
  toEventView,
  toNodeView,
  toRunView,
  toThreadView,
} from './views.js';

export interface WalkKey extends NodeKey {
  direction: 'ancestors' | 'descendants';
  depth?: number | undefined;
  kinds?: readonly NodeKind[] | undefined;
}

/**
 * One search match as the search row holds it: its thread, the node's id and sequence, its score
 * (higher is better) and a snippet. The node itself is not read: a search of 64 KiB payloads
 * that asks only for scores and snippets would otherwise parse and copy every hit's payload.
 */
export interface NodeSearchView {
  threadId: string;
  nodeId: string;
  sequence: number;
  score: number;
  snippet: SearchSnippet;
}

/** Why searchNodes answers nothing: its index is off (see ThreadStore.searchIndexed). */
export interface SearchDisabled {
  code: 'SEARCH_DISABLED';
  message: string;
}

const SEARCH_DISABLED: SearchDisabled = {
  code: 'SEARCH_DISABLED',
  message:
    'search is disabled: node payloads are encrypted at rest (WEFT_ENCRYPTION_KEY) and the search index would hold their text in plain text. Set WEFT_SEARCH_PLAINTEXT_INDEX=1 to keep the index anyway; nodes written from then on are found.',
};

export interface Reads {
  /** Client columns are sealed at rest: no SQL match on them, plain-text indexes off by default. */
  readonly encryptedAtRest: boolean;
  threads(ids: readonly string[]): Promise<Array<ThreadView | undefined>>;
  listThreads(query: ThreadListQuery): Promise<ThreadView[]>;
  /** How many threads a list with this filter holds. */
  countThreads(query: ThreadFilterQuery): Promise<number>;
  nodes(keys: readonly NodeKey[]): Promise<Array<NodeView | undefined>>;
  nodePage(query: NodePageQuery & { kinds?: readonly NodeKind[] | undefined }): Promise<NodeView[]>;
  nodeCount(threadId: string): Promise<number>;
  /** How many nodes of the thread match the filter. */
  countNodes(query: NodeFilterQuery & { kinds?: readonly NodeKind[] | undefined }): Promise<number>;
  /** Each key's children, oldest first; over `limit`: the total alone (see child-reads.ts). */
  children(keys: readonly NodeKey[], limit: number): Promise<ChildList[]>;
  childPage(query: ChildPageQuery): Promise<ChildList>;
  resourceVersions(
    keys: ReadonlyArray<{ threadId: string; resourceKey: string }>,
  ): Promise<NodeView[][]>;
  resources(threadId: string): Promise<NodeView[]>;
  /** Current semantic heads; filters are normalised like writes (an invalid one matches nothing). */
  memory(threadId: string, filter: { type?: string; key?: string }): Promise<MemoryView[]>;
  events(threadId: string, afterIndex: number, take: number): Promise<EventView[]>;
  /** The same entries without their bodies (read none of them). */
  eventHeads(threadId: string, afterIndex: number, take: number): Promise<EventHeadView[]>;
  runs(keys: readonly NodeKey[]): Promise<Array<RunView | undefined>>;
  /**
   * The run with this id: in `threadId` when given, else in the thread that started it (a fork
   * holds a copy under the same id). VALIDATION_FAILED when that is ambiguous. With `tenant`,
   * only runs of that tenant's threads count (another tenant's run is not found).
   */
  findRun(runId: string, threadId?: string, tenant?: string): Promise<Result<RunView | undefined>>;
  listRuns(query: RunListQuery): Promise<RunView[]>;
  /** How many runs a list with this filter holds. */
  countRuns(query: RunFilterQuery): Promise<number>;
  /** Approval requests of the tenant's runs, newest first unless asked otherwise. */
  listApprovals(query: ApprovalListQuery): Promise<ApprovalView[]>;
  countApprovals(query: ApprovalFilterQuery): Promise<number>;
  /** Full-text search of the tenant's node payloads, best first; SEARCH_DISABLED when off. */
  searchNodes(
    query: NodeSearchQuery & { kinds?: readonly NodeKind[] | undefined },
  ): Promise<Result<NodeSearchView[], SearchDisabled>>;
  /** The tenant's activity feed after number `afterSeq`, in order (threads by storage key). */
  activity(tenantId: string, afterSeq: number, take: number): Promise<ActivityView[]>;
  /** A page of the tenant's audit trail (thread deletions); ids as the tenant names them. */
  auditEntries(query: AuditListQuery): Promise<AuditView[]>;
  countAuditEntries(query: AuditFilterQuery): Promise<number>;
  /** The tenant's last activity number (0 before any). */
  lastActivity(tenantId: string): Promise<number>;
  /** Node ids reached by each walk over the stored graph, in walk order (core/graph/walk.ts). */
  walks(keys: readonly WalkKey[]): Promise<Array<string[]>>;
  spend(threadId: string): Promise<Result<ThreadSpend>>;
  stateAt(threadId: string, index?: number): Promise<Result<StateAt>>;
  /** The thread's runs after its first `index` entries, in the order they were started. */
  runsAt(threadId: string, index: number): Promise<Result<RunView[]>>;
  verify(threadId: string, strict: boolean): Promise<Result<VerifyReport>>;
  diff(a: string, b: string): Promise<Result<ThreadDiffView>>;
  /**
   * The projection of the thread's current state: VALIDATION_FAILED for bad input,
   * PROJECTION_OVERFLOW when the mandatory part cannot fit in `maxPromptTokens`, NOT_FOUND.
   */
  projection(threadId: string, input: ProjectionInput): Promise<Result<ProjectionView>>;
  close(): Promise<void>;
}

const nodeKey = (threadId: string, id: string) => `${threadId}\u0000${id}`;
const storableAudit = (q: AuditFilterQuery) => isStorable(q.threadId) && isStorable(q.action);

/** `read(keys)`, or no rows without a query when no key is left. */
async function storableOnly<K, R>(
  keys: readonly K[],
  read: (keys: K[]) => Promise<R[]>,
): Promise<R[]> {
  return keys.length === 0 ? [] : read([...keys]);
}

/** Values in the order of `keys`, looked up by `keyOf`. */
function inKeyOrder<K, V>(
  keys: readonly K[],
  values: readonly V[],
  keyOfKey: (k: K) => string,
  keyOfValue: (v: V) => string,
): Array<V | undefined> {
  const byKey = new Map(values.map((v) => [keyOfValue(v), v]));
  return keys.map((k) => byKey.get(keyOfKey(k)));
}

function groupInKeyOrder<K, V>(
  keys: readonly K[],
  values: readonly V[],
  keyOfKey: (k: K) => string,
  keyOfValue: (v: V) => string,
): V[][] {
  const groups = new Map<string, V[]>();
  for (const v of values) {
    const key = keyOfValue(v);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [v]);
    else group.push(v);
  }
  return keys.map((k) => groups.get(keyOfKey(k)) ?? []);
}

const invalid = (path: string, message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message,
  issues: [{ path, message }],
});

/** The VALIDATION_FAILED of a run lookup by a run or thread id that is not storable text. */
function runLookupProblem(runId: string, threadId: string | undefined): Result<never> | undefined {
  for (const [value, path] of [
    [runId, '$.id'],
    [threadId, '$.threadId'],
  ] as const) {
    const problem = typeof value === 'string' ? textProblem(value) : undefined;
    if (problem !== undefined) return err(invalid(path, problem));
  }
  return undefined;
}

/** What the read groups below share: the engine, its read queries and the key helpers. */
interface ReadContext {
  engine: Engine;
  q: ReadQueries;
  byNode: (n: { threadId: string; id: string }) => string;
  /**
   * A key that is not storable text (a NUL, a lone surrogate) matches no stored row; it is
   * answered without a query, since Postgres refuses a NUL even in a lookup.
   */
  storableKeys: <K extends { threadId: string; id: string }>(keys: readonly K[]) => K[];
}

type GraphReads = Pick<
  Reads,
  | 'threads'
  | 'listThreads'
  | 'countThreads'
  | 'nodes'
  | 'nodePage'
  | 'nodeCount'
  | 'countNodes'
  | 'resourceVersions'
  | 'resources'
  | 'memory'
  | 'events'
  | 'eventHeads'
  | 'walks'
>;

/** Threads, nodes, resources, memory, events and walks, read from the read model. */
function createGraphReads({ q, byNode, storableKeys }: ReadContext): GraphReads {
  return {
    threads: async (ids) =>
      inKeyOrder(
        ids,
        (await storableOnly(ids.filter(isStorable), (k) => q.threads(k))).map(toThreadView),
        (id) => id,
        (t) => t.id,
      ),

    listThreads: async (query) =>
      isStorable(query.forkedFromId) ? (await q.listThreads(query)).map(toThreadView) : [],

    countThreads: async (query) => (isStorable(query.forkedFromId) ? q.countThreads(query) : 0),

    nodes: async (keys) =>
      inKeyOrder(
        keys,
        (await storableOnly(storableKeys(keys), (k) => q.nodes(k))).map(toNodeView),
        byNode,
        byNode,
      ),

    nodePage: async (query) =>
      isStorable(query.runId) && isStorable(query.resourceKey)
        ? (await q.nodePage(query)).map(toNodeView)
        : [],

    nodeCount: (threadId) => q.nodeCount(threadId),
    countNodes: async (query) =>
      isStorable(query.runId) && isStorable(query.resourceKey) ? q.countNodes(query) : 0,

    async resourceVersions(keys) {
      const rows = (await q.resourceVersions(keys)).map(toNodeView);
      return groupInKeyOrder(
        keys,
        rows,
        (k) => nodeKey(k.threadId, k.resourceKey),
        (n) => nodeKey(n.threadId, n.resourceKey ?? ''),
      );
    },

    async resources(threadId) {
      return (await q.resourceHeads(threadId)).map((h) => toNodeView(h.node));
    },

    async memory(threadId, filter) {
      const type = filter.type === undefined ? undefined : normalizeSemanticType(filter.type);
      const key = filter.key === undefined ? undefined : normalizeSemanticKey(filter.key);
      // A filter that cannot be normalised names no stored key: it matches nothing.
      if (
        (filter.type !== undefined && type === undefined) ||
        (filter.key !== undefined && key === undefined)
      ) {
        return [];
      }
      const heads = await q.resourceHeads(threadId, {
        semantic: true,
        ...(type === undefined ? {} : { type }),
        ...(key === undefined ? {} : { key }),
      });
      return heads.flatMap((h) =>
        h.semanticType === null || h.semanticKey === null
          ? []
          : [{ type: h.semanticType, key: h.semanticKey, node: toNodeView(h.node) }],
      );
    },

    events: async (threadId, afterIndex, take) =>
      (await q.entries(threadId, afterIndex, take)).map(toEventView),

    eventHeads: async (threadId, afterIndex, take) =>
      (await q.entryHeads(threadId, afterIndex, take)).map((e) => ({
        threadId,
        index: e.index,
        id: e.entryId,
        type: e.type,
        recordedAt: e.recordedAt,
      })),

    walks: (keys) =>
      Promise.all(
        keys.map((k) =>
          isStorable(k.threadId) && isStorable(k.id)
            ? q.walk({
                threadId: k.threadId,
                id: k.id,
                direction: k.direction,
                depth: k.depth,
                kinds: k.kinds,
              })
            : Promise.resolve([]),
        ),
      ),
  };
}

type RunReads = Pick<
  Reads,
  'runs' | 'findRun' | 'listRuns' | 'countRuns' | 'listApprovals' | 'countApprovals' | 'runsAt'
>;

/** Runs and their approval requests. */
function createRunReads({ engine, q, byNode, storableKeys }: ReadContext): RunReads {
  return {
    runs: async (keys) =>
      inKeyOrder(
        keys,
        (await storableOnly(storableKeys(keys), (k) => q.runs(k))).map(toRunView),
        byNode,
        byNode,
      ),

    async findRun(runId, threadId, tenant) {
      const bad = runLookupProblem(runId, threadId);
      if (bad !== undefined) return bad;
      if (threadId !== undefined) {
        // With a tenant, `threadId` is its id; the system names threads by storage key.
        const key =
          tenant === undefined ? threadId : await threadKey(engine.tenants, threadId, tenant);
        if (key === undefined) return ok(undefined);
        const [row] = await q.runs([{ threadId: key, id: runId }]);
        return ok(row === undefined ? undefined : toRunView(row));
      }
      const places = (await q.runPlaces(runId)).filter(
        (p) => tenant === undefined || p.tenantId === tenant,
      );
      const homes = runHomes(places);
      if (homes.length === 0) return ok(undefined);
      if (homes.length > 1) {
        const threads = homes.map((h) => shownId(h.threadId, tenant)).join(', ');
        return err(
          invalid('$.threadId', `run ${runId} exists in threads ${threads}: pass threadId`),
        );
      }
      const [row] = await q.runs([{ threadId: homes[0]!.threadId, id: runId }]);
      return ok(row === undefined ? undefined : toRunView(row));
    },

    listRuns: async (query) =>
      isStorable(query.threadId) ? (await q.listRuns(query)).map(toRunView) : [],

    countRuns: async (query) => (isStorable(query.threadId) ? q.countRuns(query) : 0),

    listApprovals: async (query) =>
      isStorable(query.threadId) ? (await q.listApprovals(query)).map(toApprovalView) : [],

    countApprovals: async (query) => (isStorable(query.threadId) ? q.countApprovals(query) : 0),

    async runsAt(threadId, index) {
      const at = await engine.runsAt(threadId, index);
      if (!at.ok) return at;
      const date = (iso: string | undefined) => (iso === undefined ? null : new Date(iso));
      return ok(
        at.value.runs.map(({ run, logIndex }) => ({
          threadId: at.value.threadId,
          id: run.run_id,
          status: run.status,
          createdAt: new Date(run.created_at),
          updatedAt: new Date(run.updated_at),
          startedAt: date(run.started_at),
          logIndex,
          state: run,
        })),
      );
    },
  };
}

/** Search, the tenant's activity and audit trail. */
function createTenantReads({
  engine,
  q,
}: ReadContext): Pick<
  Reads,
  'searchNodes' | 'activity' | 'auditEntries' | 'countAuditEntries' | 'lastActivity'
> {
  return {
    async searchNodes(query) {
      if (!engine.store.searchIndexed) return err(SEARCH_DISABLED);
      if (query.take === 0 || !isStorable(query.threadId)) return ok([]);
      // A redacted node has no search row (its redaction deletes it), so it is never a hit.
      const hits = await engine.store.searchNodes(query);
      return ok(
        hits.map((h) => ({
          threadId: h.threadId,
          nodeId: h.nodeId,
          sequence: h.sequence,
          score: h.score,
          snippet: h.snippet,
        })),
      );
    },

    activity: (tenantId, afterSeq, take) => q.activity(tenantId, afterSeq, take),
    auditEntries: async (query) => (storableAudit(query) ? q.auditEntries(query) : []),
    countAuditEntries: async (query) => (storableAudit(query) ? q.countAuditEntries(query) : 0),
    lastActivity: (tenantId) => q.lastActivity(tenantId),
  };
}

/**
 * The read API on an engine and read queries (default: opened on `databaseUrl`). `close()`
 * closes the queries it opened itself, not the engine.
 */
export function createReads(engine: Engine, source: ReadQueries | ReadsSource): Reads {
  const q = 'databaseUrl' in source ? openReadQueries(source, engine.store.codec) : source;
  const owned = 'databaseUrl' in source;
  const context: ReadContext = {
    engine,
    q,
    byNode: (n) => nodeKey(n.threadId, n.id),
    storableKeys: (keys) => keys.filter((k) => isStorable(k.threadId) && isStorable(k.id)),
  };

  return {
    encryptedAtRest: engine.store.codec.encrypted,
    ...createGraphReads(context),
    ...createChildReads(q),
    ...createRunReads(context),
    ...createTenantReads(context),
    ...createStateReads(engine, q),

    async close() {
      if (owned) await q.close();
    },
  };
}
