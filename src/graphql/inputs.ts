/** Helpers shared by mutation inputs. */
import { z } from 'zod';
import { type CarriesCommitted, COMMITTED } from '../engine/index.js';
import { createLoaders, type GraphQLContext, type LoaderSeed } from './context.js';

/** Leaves out null and undefined fields (GraphQL's "not given"), for the engine's optional inputs. */
export function compact<T extends Record<string, unknown>>(
  input: T,
): { [K in keyof T]?: Exclude<T[K], null | undefined> } {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as { [K in keyof T]?: Exclude<T[K], null | undefined> };
}

/** The optional idempotency key every mutation input takes: a retry with the same key returns the first answer and writes nothing. */
export const idempotencyKeyField = {
  description: 'A retry with the same key and request returns the first result and writes nothing.',
  validate: z.string().min(1).max(200),
};

/**
 * After a write, this request's loaders may hold rows from before it (an earlier mutation of the
 * same operation, or a read): start from fresh ones. They start with what the write committed
 * (`written`'s views, when the engine gave them: a first answer, not a retry's), so answering
 * reads none of it back. The views name the thread by storage key; the answer's `threadId` is
 * the caller's name for it.
 */
export function refreshAfterWrite<T>(
  ctx: GraphQLContext,
  value: T,
  written: CarriesCommitted & { threadId?: string } = value as CarriesCommitted,
): T {
  const committed = written[COMMITTED];
  const threadId = written.threadId;
  if (committed === undefined || threadId === undefined) {
    ctx.loaders = createLoaders(ctx.reads);
    return value;
  }
  let seed: LoaderSeed | undefined;
  ctx.loaders = createLoaders(ctx.reads, () => {
    if (seed !== undefined) return seed;
    const views = committed();
    seed = {
      ...(views.thread === undefined ? {} : { thread: { ...views.thread, id: threadId } }),
      nodes: views.nodes.map((node) => ({ ...node, threadId })),
      runs: views.runs.map((run) => ({ ...run, threadId })),
    };
    return seed;
  });
  return value;
}
