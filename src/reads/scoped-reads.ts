import { err, ok, type Result } from '../core/errors.js';
import {
  answeredAs,
  DEFAULT_TENANT,
  publicThreadId,
  qualifiedKey,
  type ThreadTenants,
  threadKey,
} from '../engine/tenancy.js';
import type { Reads } from './reads.js';
import type { EventView, NodeView, ThreadView } from './views.js';

/** How `tenant` names its threads in the read API over `reads`: the mappings both ways. */
function createScope(reads: Reads, tenants: ThreadTenants, tenant: string) {
  /** The storage key of the tenant's thread `threadId`; undefined when it has none. */
  const keyOf = (threadId: string) => threadKey(tenants, threadId, tenant);
  /**
   * The key a cursor naming `threadId` stands for: the thread's, or where a thread by that id
   * would be stored (a cursor only needs a position in the key order).
   */
  const cursorKey = async (threadId: string) =>
    (await keyOf(threadId)) ??
    (tenant === DEFAULT_TENANT ? threadId : qualifiedKey(threadId, tenant));
  const notFound = (id: string): Result<never> =>
    err({ code: 'NOT_FOUND', message: `thread ${id} does not exist`, entity: 'Thread', id });
  /** A view with its thread named by id instead of storage key. */
  const named = <T extends { threadId: string }>(view: T): T =>
    ({ ...view, threadId: publicThreadId(view.threadId) }) as T;
  const namedThread = (view: ThreadView): ThreadView => ({ ...view, id: publicThreadId(view.key) });
  const namedEvents = (events: EventView[]) => events.map(named);
  /** `result` with the key replaced by the id wherever it shows (messages included). */
  const answered = <T>(
    result: Result<T>,
    key: string,
    id: string,
    value: (v: T) => T,
  ): Result<T> => (result.ok ? ok(value(result.value)) : answeredAs(result, { key, id }));

  /**
   * Answers keys of the tenant's threads through `read` (given storage keys), the others with
   * `none()`, in key order; `out` names each answer's thread by id again.
   */
  async function keyed<K extends { threadId: string }, V>(
    keys: readonly K[],
    read: (keys: readonly K[]) => Promise<V[]>,
    none: () => V,
    out: (value: V) => V,
  ): Promise<V[]> {
    const threads = [...new Set(keys.map((k) => k.threadId))];
    const found = await Promise.all(threads.map(keyOf));
    const storedAs = new Map<string, string>();
    threads.forEach((id, i) => {
      if (found[i] !== undefined) storedAs.set(id, found[i]);
    });
    const allowed = keys.flatMap((k) => {
      const key = storedAs.get(k.threadId);
      return key === undefined ? [] : [{ ...k, threadId: key }];
    });
    const answers = allowed.length === 0 ? [] : await read(allowed);
    let next = 0;
    return keys.map((k) => (storedAs.has(k.threadId) ? out(answers[next++]!) : none()));
  }

  /** `read(key)` for the tenant's thread `threadId`, else `none`. */
  const ifVisible = async <T>(
    threadId: string,
    read: (key: string) => Promise<T>,
    none: T,
  ): Promise<T> => {
    const key = await keyOf(threadId);
    return key === undefined ? none : read(key);
  };
  /** `read(key)` for the tenant's thread `threadId` (errors in its terms), else NOT_FOUND. */
  const orNotFound = async <T>(
    threadId: string,
    read: (key: string) => Promise<Result<T>>,
    value: (v: T) => T = (v) => v,
  ): Promise<Result<T>> => {
    const key = await keyOf(threadId);
    return key === undefined ? notFound(threadId) : answered(await read(key), key, threadId, value);
  };
  /**
   * A list or count query of the tenant, its thread filter and cursor named by storage key;
   * undefined when it filters by a thread the tenant does not have (the list is empty).
   */
  async function scopedList<
    Q extends { threadId?: string | undefined; after?: { threadId: string } | undefined },
  >(query: Q): Promise<(Q & { tenantId: string }) | undefined> {
    const threadId = query.threadId === undefined ? undefined : await keyOf(query.threadId);
    if (query.threadId !== undefined && threadId === undefined) return undefined;
    const after =
      query.after === undefined
        ? undefined
        : { ...query.after, threadId: await cursorKey(query.after.threadId) };
    return { ...query, threadId, after, tenantId: tenant };
  }
  const nodesNamed = (nodes: NodeView[]) => nodes.map(named);
  const same = <T>(v: T) => v;

  return {
    reads,
    tenant,
    keyOf,
    cursorKey,
    notFound,
    named,
    namedThread,
    namedEvents,
    nodesNamed,
    keyed,
    ifVisible,
    orNotFound,
    scopedList,
    same,
  };
}

type Scope = ReturnType<typeof createScope>;

/** Threads, nodes, resources, memory, events and walks as the tenant sees them. */
function scopedGraphReads(scope: Scope) {
  const { reads, tenant, keyOf, cursorKey, named, namedThread, namedEvents, nodesNamed } = scope;
  const { keyed, ifVisible, same } = scope;
  return {
    async threads(ids) {
      const keys = await Promise.all(ids.map(keyOf));
      const views = await reads.threads(keys.filter((k): k is string => k !== undefined));
      let next = 0;
      return keys.map((key) => {
        if (key === undefined) return undefined;
        const view = views[next++];
        return view?.tenantId === tenant ? namedThread(view) : undefined;
      });
    },
    listThreads: async (query) => {
      const after =
        query.after === undefined
          ? undefined
          : { at: query.after.at, id: await cursorKey(query.after.id) };
      // A fork records its source by id (the log's thread_forked), so the filter is an id.
      const rows = await reads.listThreads({ ...query, after, tenantId: tenant });
      return rows.map(namedThread);
    },
    countThreads: (query) => reads.countThreads({ ...query, tenantId: tenant }),
    nodes: (keys) =>
      keyed(
        keys,
        (k) => reads.nodes(k),
        () => undefined,
        (n) => n && named(n),
      ),
    nodePage: (query) =>
      ifVisible(
        query.threadId,
        async (key) => nodesNamed(await reads.nodePage({ ...query, threadId: key })),
        [],
      ),
    nodeCount: (threadId) => ifVisible(threadId, (key) => reads.nodeCount(key), 0),
    countNodes: (query) =>
      ifVisible(query.threadId, (key) => reads.countNodes({ ...query, threadId: key }), 0),
    children: (keys, limit) =>
      keyed(
        keys,
        (k) => reads.children(k, limit),
        () => ({ nodes: [], total: 0 }),
        (list) => ({ ...list, nodes: nodesNamed(list.nodes) }),
      ),
    childPage: (query) =>
      ifVisible(
        query.threadId,
        async (key) => {
          const list = await reads.childPage({ ...query, threadId: key });
          return { ...list, nodes: nodesNamed(list.nodes) };
        },
        { nodes: [], total: 0 },
      ),
    resourceVersions: (keys) =>
      keyed(
        keys,
        (k) => reads.resourceVersions(k),
        () => [],
        nodesNamed,
      ),
    resources: (threadId) =>
      ifVisible(threadId, async (key) => nodesNamed(await reads.resources(key)), []),
    memory: (threadId, filter) =>
      ifVisible(
        threadId,
        async (key) =>
          (await reads.memory(key, filter)).map((m) => ({ ...m, node: named(m.node) })),
        [],
      ),
    events: (threadId, afterIndex, take) =>
      ifVisible(
        threadId,
        async (key) => namedEvents(await reads.events(key, afterIndex, take)),
        [],
      ),
    eventHeads: (threadId, afterIndex, take) =>
      ifVisible(
        threadId,
        async (key) => (await reads.eventHeads(key, afterIndex, take)).map(named),
        [],
      ),
    walks: (keys) =>
      keyed(
        keys,
        (k) => reads.walks(k),
        () => [],
        same,
      ),
  } satisfies Partial<Reads>;
}

/** Runs, approvals, search, activity, audit and state reads as the tenant sees them. */
function scopedRunReads(scope: Scope) {
  const { reads, tenant, keyOf, notFound, named, namedEvents, keyed, orNotFound, scopedList } =
    scope;
  return {
    runs: (keys) =>
      keyed(
        keys,
        (k) => reads.runs(k),
        () => undefined,
        (r) => r && named(r),
      ),
    async findRun(runId, threadId) {
      const found = await reads.findRun(runId, threadId, tenant);
      return found.ok ? ok(found.value && named(found.value)) : found;
    },
    listRuns: async (query) => {
      const scoped = await scopedList(query);
      return scoped === undefined ? [] : (await reads.listRuns(scoped)).map(named);
    },
    async countRuns(query) {
      const scoped = await scopedList(query);
      return scoped === undefined ? 0 : reads.countRuns(scoped);
    },
    listApprovals: async (query) => {
      const scoped = await scopedList(query);
      return scoped === undefined ? [] : (await reads.listApprovals(scoped)).map(named);
    },
    async countApprovals(query) {
      const scoped = await scopedList(query);
      return scoped === undefined ? 0 : reads.countApprovals(scoped);
    },
    async searchNodes(query) {
      const threadId = query.threadId === undefined ? undefined : await keyOf(query.threadId);
      // Another tenant's thread matches nothing, but a disabled search still says so.
      const take = query.threadId !== undefined && threadId === undefined ? 0 : query.take;
      const found = await reads.searchNodes({ ...query, threadId, take, tenantId: tenant });
      return found.ok ? ok(found.value.map(named)) : found;
    },
    activity: async (_tenant, afterSeq, take) =>
      (await reads.activity(tenant, afterSeq, take)).map(named),
    lastActivity: () => reads.lastActivity(tenant),
    auditEntries: (query) => reads.auditEntries({ ...query, tenantId: tenant }),
    countAuditEntries: (query) => reads.countAuditEntries({ ...query, tenantId: tenant }),
    spend: (threadId) => orNotFound(threadId, (key) => reads.spend(key)),
    stateAt: (threadId, index) => orNotFound(threadId, (key) => reads.stateAt(key, index), named),
    runsAt: (threadId, index) =>
      orNotFound(
        threadId,
        (key) => reads.runsAt(key, index),
        (runs) => runs.map(named),
      ),
    verify: (threadId, strict) => orNotFound(threadId, (key) => reads.verify(key, strict)),
    diff: async (a, b) => {
      const [ka, kb] = [await keyOf(a), await keyOf(b)];
      if (ka === undefined) return notFound(a);
      if (kb === undefined) return notFound(b);
      const diff = answeredAs(await reads.diff(ka, kb), { key: ka, id: a });
      if (!diff.ok) return answeredAs(diff, { key: kb, id: b });
      return ok({
        ...diff.value,
        onlyA: namedEvents(diff.value.onlyA),
        onlyB: namedEvents(diff.value.onlyB),
      });
    },
    projection: (threadId, input) =>
      orNotFound(threadId, (key) => reads.projection(key, input), named),
  } satisfies Partial<Reads>;
}

/**
 * The read API as `tenant` sees it: thread ids are the tenant's own (see tenancy.ts), mapped to
 * storage keys on the way in and back to ids on the way out, so no answer shows a storage key;
 * lists are filtered by tenant in SQL; a read of another tenant's thread (or of its nodes, runs,
 * events, state) answers exactly as one of a thread that does not exist — undefined, empty, or
 * NOT_FOUND. Every call goes to `reads`. `close()` does nothing: the shared read API is closed
 * by its owner.
 */
export function scopeReads(reads: Reads, tenants: ThreadTenants, tenant: string): Reads {
  const scope = createScope(reads, tenants, tenant);
  return {
    encryptedAtRest: reads.encryptedAtRest,
    ...scopedGraphReads(scope),
    ...scopedRunReads(scope),
    close: async () => undefined,
  };
}
