import { err, ok, type Result } from '../core/errors.js';
import { foldThreadLog } from '../core/thread/fold.js';
import type { ThreadMachineOptions, ThreadState } from '../core/thread/index.js';
import type { ThreadStore } from '../store/read-model/index.js';
import { threadNotFound } from './checks.js';

/** The latest known states of recently used threads (see createThreadCache). */
export interface ThreadCache {
  get(threadId: string): ThreadState | undefined;
  /** Keeps `state` unless a longer one is cached (a slower command may finish with an older one). */
  set(threadId: string, state: ThreadState): void;
}

/** Serialises async work per key. */
export type KeyedLock = <T>(key: string, work: () => Promise<T>) => Promise<T>;

/**
 * The latest state of a thread: the cached one, or (with `refresh`, or when nothing is cached)
 * the cached one caught up with the entries stored after it. NOT_FOUND for an unknown thread.
 */
export type LoadThread = (threadId: string, refresh?: boolean) => Promise<Result<ThreadState>>;

/**
 * `load` over `cache`: a thread not cached, or asked with `refresh`, is caught up by folding the
 * entries stored after its cached length (foldThreadLog: trust and state hashes), and the result
 * cached. An entry that does not fold fails the load (VERIFICATION_FAILED and the like).
 */
export function createThreadLoader(
  store: Pick<ThreadStore, 'readEntries'>,
  cache: ThreadCache,
  machineOptions: ThreadMachineOptions,
): LoadThread {
  return async function load(threadId, refresh = false) {
    const cached = cache.get(threadId);
    if (cached !== undefined && !refresh) return ok(cached);
    const tail = await store.readEntries(threadId, cached?.length ?? 0);
    if (tail.length === 0) return cached === undefined ? err(threadNotFound(threadId)) : ok(cached);
    const folded = foldThreadLog(tail, {
      machine: machineOptions,
      ...(cached === undefined ? {} : { from: cached }),
    });
    if (!folded.ok) {
      return err({ ...folded.error, message: `thread ${threadId}: ${folded.error.message}` });
    }
    cache.set(threadId, folded.value);
    return folded;
  };
}

/**
 * The latest known state of recently used threads, least recently used evicted first. A cached
 * state may be behind the database (another process appended): the engine catches it up from
 * its length, and a commit from a stale state loses at the unique (thread, index) key.
 */
export function createThreadCache(capacity: number): ThreadCache {
  const states = new Map<string, ThreadState>();
  return {
    get(threadId: string): ThreadState | undefined {
      const state = states.get(threadId);
      if (state !== undefined) {
        states.delete(threadId);
        states.set(threadId, state);
      }
      return state;
    },
    set(threadId: string, state: ThreadState): void {
      const current = states.get(threadId);
      // Never move a thread backwards: a slower command may finish with an older state.
      if (current !== undefined && current.length > state.length) return;
      states.delete(threadId);
      states.set(threadId, state);
      if (states.size > capacity) states.delete(states.keys().next().value as string);
    },
  };
}

/** Serialises async work per key (commands on one thread run one after another in-process). */
export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<void>>();
  return async function withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chained = previous.then(() => tail);
    tails.set(key, chained);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (tails.get(key) === chained) tails.delete(key);
    }
  };
}
