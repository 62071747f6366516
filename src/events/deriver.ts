import { WeftFailure } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import { foldThreadLog } from '../core/thread/fold.js';
import {
  createThreadMachine,
  type ThreadEffect,
  type ThreadMachineOptions,
  type ThreadState,
} from '../core/thread/index.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { ThreadStore } from '../store/read-model/index.js';

/**
 * Re-derives the effects of stored entries (what a subscriber resuming from the store, or a hub
 * woken by another instance, needs to tell node, run and approval events apart). Effects are a
 * pure function of the log: applying entry i to the state after entries [0, i).
 */
export interface EffectDeriver {
  /** Effects per entry, for contiguous entries of one thread in index order. */
  effectsOf(threadId: string, entries: readonly LogEntry[]): Promise<ThreadEffect[][]>;
  /** The state after every stored entry of the thread (empty state for an unknown thread). */
  latestState(threadId: string): Promise<ThreadState>;
  /** Drops what is cached of the thread: its stored entries were rewritten (a redaction). */
  forget(threadId: string): void;
}

interface ThreadCache {
  state: ThreadState;
  /** Effects of recent entries by index: many subscribers ask for the same ones. */
  effects: Map<number, ThreadEffect[]>;
  /** Derivations of one thread run one after another, so the second finds the first's work. */
  chain: Promise<unknown>;
}

const MAX_THREADS = 64;
const MAX_EFFECTS_PER_THREAD = 1024;

export function createEffectDeriver(
  store: ThreadStore,
  machineOptions: ThreadMachineOptions = {},
  pageSize = 500,
  invalidations: Invalidations = createInvalidations(),
): EffectDeriver {
  // Under the thread's deletion epoch: a thread made again under a deleted one's id starts from
  // the empty state, not from the deleted one's.
  const threads = createCache<ThreadCache>({ maxEntries: MAX_THREADS });
  const empty = createThreadMachine(machineOptions).initial;

  function cacheOf(threadId: string): ThreadCache {
    const key = invalidations.keyOf(threadId);
    let cache = threads.get(key);
    if (cache === undefined) {
      cache = { state: empty, effects: new Map(), chain: Promise.resolve() };
      threads.set(key, cache);
    }
    return cache;
  }

  function serially<T>(cache: ThreadCache, task: () => Promise<T>): Promise<T> {
    const run = cache.chain.then(task, task);
    cache.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Applies entries to the cache's state, remembering their effects. As the engine does (one
   * fold): recorded ids are trusted only on a fully signed run of entries, and every state hash
   * present is checked, so a tampered entry is refused here as it is when the engine loads it.
   */
  function apply(threadId: string, cache: ThreadCache, entries: readonly LogEntry[]): void {
    if (entries.length === 0) return;
    // Effects derived in this call are from the entries as they read now.
    const fresh = new Set<number>();
    const folded = foldThreadLog(entries, {
      machine: machineOptions,
      from: cache.state,
      onEntry({ entry, effects }) {
        // A redaction rewrote earlier entries: the effects kept for them hold the old payloads.
        if (entry.event.type === 'nodes_redacted') {
          for (const index of [...cache.effects.keys()]) {
            if (!fresh.has(index)) cache.effects.delete(index);
          }
        }
        fresh.add(entry.index);
        cache.effects.set(entry.index, effects as ThreadEffect[]);
        if (cache.effects.size > MAX_EFFECTS_PER_THREAD) {
          cache.effects.delete(cache.effects.keys().next().value!);
        }
      },
    });
    if (!folded.ok) {
      // The engine's typed error (VERIFICATION_FAILED {index, entryId}, the machine's code).
      const { error } = folded;
      throw new WeftFailure({
        ...error,
        message: `cannot derive the events of thread ${threadId}: ${error.message} (run verify on this thread)`,
      });
    }
    cache.state = folded.value;
  }

  /** Brings the cache's state to `length` entries, reading what is missing from the store. */
  async function advanceTo(threadId: string, cache: ThreadCache, length: number): Promise<void> {
    if (cache.state.length > length) {
      // Asked about the past: replay from the start (rare; effects are memoised per index).
      cache.state = empty;
    }
    while (cache.state.length < length) {
      const to = Math.min(length, cache.state.length + pageSize);
      const page = await store.readEntries(threadId, cache.state.length, to);
      if (page.length === 0) break;
      apply(threadId, cache, page);
    }
  }

  return {
    effectsOf(threadId, entries) {
      const cache = cacheOf(threadId);
      return serially(cache, async () => {
        const first = entries.findIndex((e) => !cache.effects.has(e.index));
        if (first >= 0) {
          const missing = entries.slice(first);
          await advanceTo(threadId, cache, missing[0]!.index);
          if (cache.state.length !== missing[0]!.index) {
            throw new Error(
              `thread ${threadId} has ${cache.state.length} stored entries, cannot derive entry ${missing[0]!.index}`,
            );
          }
          apply(threadId, cache, missing);
        }
        return entries.map((e) => cache.effects.get(e.index) ?? []);
      });
    },
    forget(threadId) {
      threads.delete(invalidations.keyOf(threadId));
    },
    latestState(threadId) {
      const cache = cacheOf(threadId);
      return serially(cache, async () => {
        for (;;) {
          const page = await store.readEntries(
            threadId,
            cache.state.length,
            cache.state.length + pageSize,
          );
          apply(threadId, cache, page);
          if (page.length < pageSize) return cache.state;
        }
      });
    },
  };
}
