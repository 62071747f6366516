/**
 * The per-request context: who is calling (`auth`), the engine (the only writer) and the read API
 * acting for the caller's tenant, and this request's DataLoaders. A loader lives for one request,
 * so nothing cached outlives it.
 */
import DataLoader from 'dataloader';
import { type AuthInfo, OPEN_AUTH } from '../auth/types.js';
import type { Engine } from '../engine/index.js';
import {
  type ChildList,
  type EventView,
  type NodeKey,
  type NodeView,
  type Reads,
  type RunView,
  scopeReads,
  type ThreadView,
  type WalkKey,
} from '../reads/index.js';
import { createCache } from '../store/cache.js';
import { MAX_PAGE_SIZE } from './pagination.js';

export {
  type AuthInfo,
  grants,
  OPEN_AUTH,
  SCOPES,
  type Scope,
  unauthenticated,
} from '../auth/types.js';

export interface GraphQLContext {
  auth: AuthInfo;
  /** The engine acting for `auth.tenant`. */
  engine: Engine;
  /** The read API as `auth.tenant` sees it. */
  reads: Reads;
  loaders: Loaders;
}

export interface Loaders {
  thread: DataLoader<string, ThreadView | undefined>;
  node: DataLoader<NodeKey, NodeView | undefined, string>;
  children: DataLoader<NodeKey, ChildList, string>;
  resourceVersions: DataLoader<{ threadId: string; resourceKey: string }, NodeView[], string>;
  run: DataLoader<NodeKey, RunView | undefined, string>;
  walk: DataLoader<WalkKey, string[], string>;
  /** Log entries with their bodies, by thread and index. */
  event: DataLoader<EventKey, EventView | undefined, string>;
}

export interface EventKey {
  threadId: string;
  index: number;
}

const keyed = (k: { threadId: string; id: string }) => `${k.threadId}\u0000${k.id}`;

/**
 * Batches are dispatched on the next turn of the event loop rather than on the next tick, so a
 * large page yields to other clients' I/O between one level of its selection and the next.
 */
const yielding = { batchScheduleFn: (dispatch: () => void) => setImmediate(dispatch) };

/** What loaders start with (a write's own views of what it committed), built when first needed. */
export interface LoaderSeed {
  thread?: ThreadView;
  nodes: readonly NodeView[];
  runs: readonly RunView[];
}

/**
 * This operation's loaders, each built on first use: most operations (and most subscription
 * events, which get loaders of their own per event) touch one or two of them, and building six
 * DataLoaders per event was a measurable share of a replay's cost. The thread, node and run
 * loaders are primed with `seed` as they are built; an answer that uses none builds no seed.
 */
export function createLoaders(reads: Reads, seed?: () => LoaderSeed): Loaders {
  const built: Partial<Loaders> = {};
  const once = <K extends keyof Loaders>(name: K, build: () => Loaders[K]): Loaders[K] => {
    const existing = built[name];
    if (existing !== undefined) return existing as Loaders[K];
    const loader = build();
    built[name] = loader;
    if (seed !== undefined && SEEDED.has(name)) primeLoader(loaders, name, seed());
    return loader;
  };
  const loaders: Loaders = {
    get thread() {
      return once('thread', () => new DataLoader((ids) => reads.threads(ids), yielding));
    },
    get node() {
      return once(
        'node',
        () =>
          new DataLoader<NodeKey, NodeView | undefined, string>((keys) => reads.nodes(keys), {
            ...yielding,
            cacheKeyFn: keyed,
          }),
      );
    },
    get children() {
      return once(
        'children',
        () =>
          new DataLoader<NodeKey, ChildList, string>(
            async (keys) => {
              // A node with more children than a page holds is refused by the field, unread.
              const lists = await reads.children(keys, MAX_PAGE_SIZE);
              for (const list of lists) {
                for (const child of list.nodes) loaders.node.prime(child, child);
              }
              return lists;
            },
            { ...yielding, cacheKeyFn: keyed },
          ),
      );
    },
    get resourceVersions() {
      return once(
        'resourceVersions',
        () =>
          new DataLoader<{ threadId: string; resourceKey: string }, NodeView[], string>(
            (keys) => reads.resourceVersions(keys),
            { ...yielding, cacheKeyFn: (k) => `${k.threadId}\u0000${k.resourceKey}` },
          ),
      );
    },
    get run() {
      return once(
        'run',
        () =>
          new DataLoader<NodeKey, RunView | undefined, string>((keys) => reads.runs(keys), {
            ...yielding,
            cacheKeyFn: keyed,
          }),
      );
    },
    get walk() {
      return once(
        'walk',
        () =>
          new DataLoader<WalkKey, string[], string>((keys) => reads.walks(keys), {
            ...yielding,
            cacheKeyFn: (k) =>
              JSON.stringify([k.threadId, k.id, k.direction, k.depth ?? null, k.kinds ?? null]),
          }),
      );
    },
    get event() {
      return once(
        'event',
        () =>
          new DataLoader<EventKey, EventView | undefined, string>(
            (keys) => readEvents(reads, keys),
            { ...yielding, cacheKeyFn: (k) => `${k.threadId}\u0000${k.index}` },
          ),
      );
    },
  };
  return loaders;
}

/**
 * The entries asked for, one read per run of consecutive indices of a thread: a page of entries
 * whose bodies are asked for is one window read, as if it had been read whole.
 */
async function readEvents(
  reads: Reads,
  keys: readonly EventKey[],
): Promise<Array<EventView | undefined>> {
  const found = new Map<string, EventView>();
  const byThread = new Map<string, number[]>();
  for (const k of keys) {
    const list = byThread.get(k.threadId);
    if (list === undefined) byThread.set(k.threadId, [k.index]);
    else list.push(k.index);
  }
  const reading: Array<Promise<void>> = [];
  for (const [threadId, indices] of byThread) {
    const sorted = [...new Set(indices)].sort((a, b) => a - b);
    let start = 0;
    for (let i = 1; i <= sorted.length; i++) {
      if (i < sorted.length && sorted[i] === sorted[i - 1]! + 1) continue;
      const from = sorted[start]!;
      const take = sorted[i - 1]! - from + 1;
      reading.push(
        reads.events(threadId, from - 1, take).then((events) => {
          for (const e of events) found.set(`${threadId}\u0000${e.index}`, e);
        }),
      );
      start = i;
    }
  }
  await Promise.all(reading);
  return keys.map((k) => found.get(`${k.threadId}\u0000${k.index}`));
}

/** The loaders a LoaderSeed primes. */
const SEEDED: ReadonlySet<keyof Loaders> = new Set(['thread', 'node', 'run']);

function primeLoader(loaders: Loaders, name: keyof Loaders, seed: LoaderSeed): void {
  if (name === 'thread' && seed.thread !== undefined) {
    loaders.thread.prime(seed.thread.id, seed.thread);
  } else if (name === 'node') {
    for (const node of seed.nodes) loaders.node.prime(node, node);
  } else if (name === 'run') {
    for (const run of seed.runs) loaders.run.prime(run, run);
  }
}

/** Nodes read by a page or a list go into the node loader, so parent lookups find them. */
export function primeNodes(ctx: GraphQLContext, nodes: readonly NodeView[]): NodeView[] {
  for (const n of nodes) ctx.loaders.node.prime(n, n);
  return [...nodes];
}

/** Where a context keeps the unscoped engine and reads, to scope them again for its caller. */
const UNSCOPED = Symbol('weft.unscoped');

interface ContextDeps {
  engine: Engine;
  reads: Reads;
  /** Each tenant's view of `reads` (see tenantReads); default: made for this context. */
  readsFor?: ((tenant: string) => Reads) | undefined;
}

interface Unscoped {
  [UNSCOPED]?: ContextDeps;
}

/**
 * Each tenant's view of `reads`, made once per tenant (a bounded memo, as engine.forTenant is):
 * a view is some sixty functions, which every operation's context — every subscription's, for
 * as long as it lives — would otherwise make again.
 */
export function tenantReads(engine: Engine, reads: Reads): (tenant: string) => Reads {
  const made = createCache<Reads>({ maxEntries: 10_000 });
  return (tenant) => {
    let scoped = made.get(tenant);
    if (scoped === undefined) {
      scoped = scopeReads(reads, engine.tenants, tenant);
      made.set(tenant, scoped);
    }
    return scoped;
  };
}

/**
 * The context of one operation for `auth` (default: open mode): engine, reads and loaders all
 * act for `auth.tenant`. `engine` and `reads` are the shared, unscoped ones.
 */
export function createContext(deps: ContextDeps & { auth?: AuthInfo }): GraphQLContext {
  const auth = deps.auth ?? OPEN_AUTH;
  const engine = deps.engine.forTenant(auth.tenant);
  const reads =
    deps.readsFor?.(auth.tenant) ?? scopeReads(deps.reads, deps.engine.tenants, auth.tenant);
  const context: GraphQLContext & Unscoped = {
    auth,
    engine,
    reads,
    loaders: createLoaders(reads),
  };
  context[UNSCOPED] = { engine: deps.engine, reads: deps.reads, readsFor: deps.readsFor };
  return context;
}

/** The fields of a context made by createContext, acting for `auth` instead. */
export function contextFor(
  context: GraphQLContext,
  auth: AuthInfo,
): Pick<GraphQLContext, 'auth' | 'engine' | 'reads' | 'loaders'> {
  const unscoped = (context as Unscoped)[UNSCOPED];
  if (unscoped === undefined) {
    throw new Error('contextFor: the context was not made by createContext');
  }
  const { auth: _a, engine, reads, loaders } = createContext({ ...unscoped, auth });
  return { auth, engine, reads, loaders };
}
