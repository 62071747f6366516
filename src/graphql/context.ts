/**
 * The per-request context: the engine (the only writer), the read API and this request's
 * DataLoaders. A loader lives for one request, so nothing cached outlives it.
 */
import DataLoader from 'dataloader';
import type { Engine } from '../engine/index.js';
import type { NodeKey, NodeView, Reads, RunView, ThreadView, WalkKey } from '../engine/reads.js';

export interface GraphQLContext {
  engine: Engine;
  reads: Reads;
  loaders: Loaders;
}

export interface Loaders {
  thread: DataLoader<string, ThreadView | undefined>;
  node: DataLoader<NodeKey, NodeView | undefined, string>;
  children: DataLoader<NodeKey, NodeView[], string>;
  resourceVersions: DataLoader<{ threadId: string; resourceKey: string }, NodeView[], string>;
  run: DataLoader<NodeKey, RunView | undefined, string>;
  walk: DataLoader<WalkKey, string[], string>;
}

const keyed = (k: { threadId: string; id: string }) => `${k.threadId}\u0000${k.id}`;

export function createLoaders(reads: Reads): Loaders {
  const node = new DataLoader<NodeKey, NodeView | undefined, string>((keys) => reads.nodes(keys), {
    cacheKeyFn: keyed,
  });
  return {
    thread: new DataLoader((ids) => reads.threads(ids)),
    node,
    children: new DataLoader(
      async (keys) => {
        const lists = await reads.children(keys);
        for (const list of lists) for (const child of list) node.prime(child, child);
        return lists;
      },
      { cacheKeyFn: keyed },
    ),
    resourceVersions: new DataLoader((keys) => reads.resourceVersions(keys), {
      cacheKeyFn: (k) => `${k.threadId}\u0000${k.resourceKey}`,
    }),
    run: new DataLoader((keys) => reads.runs(keys), { cacheKeyFn: keyed }),
    walk: new DataLoader((keys) => reads.walks(keys), {
      cacheKeyFn: (k) =>
        JSON.stringify([k.threadId, k.id, k.direction, k.depth ?? null, k.kinds ?? null]),
    }),
  };
}

/** Nodes read by a page or a list go into the node loader, so parent lookups find them. */
export function primeNodes(ctx: GraphQLContext, nodes: readonly NodeView[]): NodeView[] {
  for (const n of nodes) ctx.loaders.node.prime(n, n);
  return [...nodes];
}

export function createContext(deps: { engine: Engine; reads: Reads }): GraphQLContext {
  return { engine: deps.engine, reads: deps.reads, loaders: createLoaders(deps.reads) };
}
