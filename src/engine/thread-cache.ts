import { err, ok, type Result } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import { foldThreadLog } from '../core/thread/fold.js';
import type { ThreadMachineOptions, ThreadState } from '../core/thread/index.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { ThreadStore } from '../store/read-model/index.js';
import { threadNotFound } from './checks.js';

/** Default bound of the thread cache: 256 MiB of estimated state. */
export const DEFAULT_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * What the estimate of a state's heap size is made of. A state is persistent (applying an entry
 * shares everything but what the entry adds), so a state's size is the size of the state it was
 * made from plus what its entries brought: their canonical text, times the heap bytes V8 spends
 * per character once that text is parsed into objects and indexed, plus a fixed cost per new
 * node (its record, id index slot, children list and metadata). Nothing here walks a state.
 *
 * Calibrated with `node --expose-gc --import tsx scripts/measure-thread-cache.ts` (heap used
 * after a full GC before and after holding 20 states of 10,000 nodes, each folded from its own
 * parsed log; Node 20.20): ASCII text took ~1 byte per character, two-byte text ~2, dense small
 * numbers ~3, a node ~230 bytes beyond its text. With the figures below the states took 0.5 to
 * 0.96 of their estimate over eight payload shapes (tiny, 200 and 2,000 characters, structured,
 * small ints, unicode, semantic memory, runs): the estimate errs high, so the bound holds.
 */
export const CACHE_ESTIMATE = {
  /** Heap bytes per character of canonical entry text folded into a state. */
  bytesPerTextChar: 2,
  /** Heap bytes per node beyond its share of the text. */
  bytesPerNode: 300,
} as const;

/**
 * What a state was derived under: the root of its thread's lineage (the thread whose rows hold
 * the first entry, store/read-model/lineage.ts; a thread of its own is its own root) and the
 * lineage's redaction generation when the derivation began to read. A redaction rewrites stored
 * history for the whole lineage (every fork shares its source's rows) and moves the generation
 * on, so every state derived before it stops being served, whoever holds it.
 */
export interface Derivation {
  readonly root: string;
  readonly generation: number;
}

/** How a state was made: folding entries with these canonical texts onto `from`. */
export interface StateOrigin {
  /** The state the entries were folded onto; default the empty thread. */
  from?: ThreadState;
  texts: readonly string[];
  /** Default: what `from` was derived under. A state derived under nothing known is not kept. */
  under?: Derivation;
  /**
   * The thread's deletion epoch when the derivation began to read (ThreadCache.epoch); default
   * the current one. A state read before a deletion is not kept.
   */
  epoch?: number;
}

/** The cache's counters since it was made, and what it holds now. */
export interface ThreadCacheStats {
  /** Estimated heap bytes of the states held (see CACHE_ESTIMATE). */
  bytes: number;
  /** The bound on `bytes`. */
  maxBytes: number;
  /** Threads whose state is held. */
  threads: number;
  /** Lookups that found a state. */
  hits: number;
  /** Lookups that found none (the thread is replayed from the database). */
  misses: number;
  /** States dropped, least recently used first, to stay under `maxBytes`. */
  evictions: number;
  /** States not kept because each alone was estimated above `maxBytes`. */
  oversized: number;
}

/** The latest known states of recently used threads (see createThreadCache). */
export interface ThreadCache {
  /** The thread's state, unless none is kept or it was derived before a redaction of its lineage. */
  get(threadId: string): ThreadState | undefined;
  /**
   * Keeps `state`, made as `origin` says (what its size is estimated from, and what it was
   * derived under), unless a longer one is cached (a slower command may finish with an older
   * one) or its derivation is already out of date.
   */
  set(threadId: string, state: ThreadState, origin: StateOrigin): void;
  /** Forgets a thread (it was deleted, call after commit): no state read before is kept. */
  delete(threadId: string): void;
  /** The thread's deletion epoch: take it before reading, for StateOrigin.epoch. */
  epoch(threadId: string): number;
  /** The current derivation of the lineage rooted at `root`: take it before reading. */
  derivation(root: string): Derivation;
  /** What a state given to `set` was derived under. */
  derivationOf(state: ThreadState): Derivation | undefined;
  /** A redaction rewrote stored history of the lineage rooted at `root` (call after commit). */
  rewritten(root: string): void;
  stats(): ThreadCacheStats;
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
  store: Pick<ThreadStore, 'readEntryTexts' | 'lineage'>,
  cache: ThreadCache,
  machineOptions: ThreadMachineOptions,
): LoadThread {
  return async function load(threadId, refresh = false) {
    const cached = cache.get(threadId);
    if (cached !== undefined && !refresh) return ok(cached);
    // Taken before reading: what a redaction committed meanwhile rewrote may or may not be in
    // what is read, so a state read across one is answered once and never cached.
    const known = cached === undefined ? undefined : cache.derivationOf(cached);
    const epoch = cache.epoch(threadId);
    const root = known?.root ?? (await lineageRoot(store, threadId));
    const under = cache.derivation(root);
    // The stored texts: the cache sizes the state by them, and the fold hashes them as they are
    // instead of serialising every entry again.
    const texts = await store.readEntryTexts(threadId, cached?.length ?? 0);
    if (texts.length === 0)
      return cached === undefined ? err(threadNotFound(threadId)) : ok(cached);
    const tail = texts.map((text) => JSON.parse(text) as LogEntry);
    const folded = foldThreadLog(tail, {
      machine: machineOptions,
      texts,
      ...(cached === undefined ? {} : { from: cached }),
    });
    if (!folded.ok) {
      return err({ ...folded.error, message: `thread ${threadId}: ${folded.error.message}` });
    }
    cache.set(
      threadId,
      folded.value,
      cached === undefined ? { texts, under, epoch } : { from: cached, texts, under, epoch },
    );
    return folded;
  };
}

/** The root of a thread's lineage: the thread whose rows hold its first entry. */
export async function lineageRoot(
  store: Pick<ThreadStore, 'lineage'>,
  threadId: string,
): Promise<string> {
  return (await store.lineage(threadId))[0]?.threadId ?? threadId;
}

/**
 * The latest known states of recently used threads, bounded by `maxBytes` of estimated size
 * (CACHE_ESTIMATE): least recently used evicted first until the rest fit; a state estimated
 * above the bound on its own is not kept (its caller still has it). A cached state may be behind
 * the database (another process appended): the engine catches it up from its length, and a
 * commit from a stale state loses at the unique (thread, index) key.
 *
 * States are held under the thread's key and deletion epoch (`invalidations`, shared with the
 * runtime's other thread-derived caches), and each remembers the lineage generation it was
 * derived under: after a deletion or a redaction no state read before it is answered, even one
 * a racing read stores afterwards.
 */
export function createThreadCache(
  maxBytes: number = DEFAULT_CACHE_BYTES,
  invalidations: Invalidations = createInvalidations(),
): ThreadCache {
  const held = createCache<{ state: ThreadState; bytes: number }>({
    maxBytes,
    sizeOf: (entry) => entry.bytes,
  });
  // The estimate of every state this cache was given, while the state lives: a command's next
  // state is sized from the one it loaded even if that one was evicted meanwhile.
  const sizes = new WeakMap<ThreadState, number>();
  const derivations = new WeakMap<ThreadState, Derivation>();
  const counts = { hits: 0, misses: 0, oversized: 0 };
  const isCurrent = (under: Derivation) =>
    under.generation === invalidations.generation(under.root);

  function sizeOf(state: ThreadState | undefined): number {
    if (state === undefined) return 0;
    // Only a state this cache never saw lands here (none does in the engine): its nodes at least.
    return sizes.get(state) ?? state.graph.count * CACHE_ESTIMATE.bytesPerNode;
  }

  function estimate(state: ThreadState, origin: StateOrigin): number {
    let chars = 0;
    for (const text of origin.texts) chars += text.length;
    const nodes = Math.max(0, state.graph.count - (origin.from?.graph.count ?? 0));
    return (
      sizeOf(origin.from) +
      chars * CACHE_ESTIMATE.bytesPerTextChar +
      nodes * CACHE_ESTIMATE.bytesPerNode
    );
  }

  return {
    get(threadId: string): ThreadState | undefined {
      const key = invalidations.keyOf(threadId);
      let entry = held.get(key);
      // Derived before a redaction of its lineage committed: it may hold what was redacted.
      if (entry !== undefined && !isCurrent(derivations.get(entry.state)!)) {
        held.delete(key);
        entry = undefined;
      }
      if (entry === undefined) {
        counts.misses++;
        return undefined;
      }
      counts.hits++;
      return entry.state;
    },
    set(threadId: string, state: ThreadState, origin: StateOrigin): void {
      const bytes = sizes.get(state) ?? estimate(state, origin);
      sizes.set(state, bytes);
      const under =
        origin.under ?? (origin.from === undefined ? undefined : derivations.get(origin.from));
      if (under !== undefined) derivations.set(state, under);
      const key = invalidations.keyOf(threadId);
      const current = held.peek(key);
      // Never move a thread backwards: a slower command may finish with an older state.
      if (
        current !== undefined &&
        isCurrent(derivations.get(current.state)!) &&
        current.state.length > state.length
      ) {
        return;
      }
      // The older state goes either way: a cached state is answered as current.
      held.delete(key);
      // Derived before a redaction of its lineage committed (or under nothing known), or read
      // before the thread was deleted: it may hold what is gone, so it is never kept.
      if (under === undefined || !isCurrent(under)) return;
      if (origin.epoch !== undefined && origin.epoch !== invalidations.epoch(threadId)) return;
      if (!held.set(key, { state, bytes })) counts.oversized++;
    },
    delete(threadId: string): void {
      held.delete(invalidations.keyOf(threadId));
      invalidations.deleted(threadId);
    },
    epoch: (threadId) => invalidations.epoch(threadId),
    derivation: (root) => ({ root, generation: invalidations.generation(root) }),
    derivationOf: (state) => derivations.get(state),
    rewritten: (root) => invalidations.rewritten(root),
    stats: () => ({
      ...counts,
      bytes: held.bytes,
      maxBytes,
      threads: held.size,
      evictions: held.evictions,
    }),
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
