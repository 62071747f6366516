/**
 * Payload salts (createThread's saltPayloads): a salted thread has a 32-byte secret of its own,
 * made here and stored (sealed) on its row; each node appended to it gets a `weft:salt` payload
 * field, HMAC-SHA256 under the secret of the thread's storage key, the node's sequence and its
 * identity text without the salt (core graph/salt.ts), so a redacted payload cannot be guessed
 * from its id without the secret. The thread's key is in it because a fork copies its source's
 * secret: a node the fork appends at the position of one of the source's never shares its id.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { NodeSalt } from '../core/graph/index.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { ThreadStore } from '../store/read-model/index.js';

/** Hex characters of the salt field (128 bits of the HMAC). */
const SALT_CHARS = 32;

/** A new thread's secret: 32 random bytes, hex. */
export const newSaltSecret = (): string => randomBytes(32).toString('hex');

/** The salt function of thread `threadId` (storage key) with this secret. */
export function saltWith(secret: string, threadId: string): NodeSalt {
  const key = Buffer.from(secret, 'hex');
  return (identityText, sequence) =>
    createHmac('sha256', key)
      .update(`${threadId}\u0000${sequence}\u0000${identityText}`)
      .digest('hex')
      .slice(0, SALT_CHARS);
}

export interface PayloadSalts {
  /** The salt of thread `threadId` (storage key); undefined when the thread is not salted. */
  of(threadId: string): NodeSalt | undefined | Promise<NodeSalt | undefined>;
  /** Drops what is known of a deleted thread. */
  forget(threadId: string): void;
  /** What a thread this process just created has (its secret, or null for none). */
  remember(threadId: string, secret: string | null): void;
}

/**
 * The threads' salts, read from the store once per thread and kept (a thread's secret is set when
 * it is created and never changes), for at most `max` threads: an unsalted thread's append pays
 * one lookup. Answers for unknown threads are not kept. Kept under the thread's deletion epoch
 * (`invalidations`), taken before the store is read: a deleted thread's salt is never answered
 * for a thread made again under its id, even when a read racing the deletion stores it late.
 */
export function createPayloadSalts(
  store: Pick<ThreadStore, 'getPayloadSalt'>,
  invalidations: Invalidations = createInvalidations(),
  max = 10_000,
): PayloadSalts {
  // `false`: the thread is known to have no salt (a cache holds no null).
  const known = createCache<NodeSalt | false>({ maxEntries: max });
  const load = async (threadId: string): Promise<NodeSalt | undefined> => {
    const key = invalidations.keyOf(threadId);
    const secret = await store.getPayloadSalt(threadId);
    if (secret === undefined) return undefined;
    const salt = secret === null ? false : saltWith(secret, threadId);
    known.set(key, salt);
    return salt || undefined;
  };
  return {
    of(threadId) {
      const salt = known.get(invalidations.keyOf(threadId));
      if (salt === undefined) return load(threadId);
      return salt || undefined;
    },
    forget: (threadId) => {
      known.delete(invalidations.keyOf(threadId));
    },
    remember: (threadId, secret) => {
      known.set(
        invalidations.keyOf(threadId),
        secret === null ? false : saltWith(secret, threadId),
      );
    },
  };
}
