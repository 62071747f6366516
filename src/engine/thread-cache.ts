import type { ThreadState } from '../core/thread/index.js';

/**
 * The latest known state of recently used threads, least recently used evicted first. A cached
 * state may be behind the database (another process appended): the engine catches it up from
 * its length, and a commit from a stale state loses at the unique (thread, index) key.
 */
export function createThreadCache(capacity: number) {
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
export function createKeyedLock() {
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
