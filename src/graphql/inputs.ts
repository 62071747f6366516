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
 * Answers a mutation from what its command committed: the request's loaders are replaced (an
 * earlier mutation of the same operation, or a read, may have filled them with rows from before
 * the write) by ones primed with the views the engine's answer carries, `written`'s, so the
 * answer's thread, nodes and runs are never read back. An answer without views (a retry answered
 * from its idempotency record, a write that is no log entry) gets empty loaders, which read the
 * rows as they are after the write. The views name the thread by storage key; the answer's
 * `threadId` is the caller's name for it.
 */
export function answerFromCommit<T>(
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
