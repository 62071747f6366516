/**
 * The one cache of src (docs/architecture.md, "the cache rule"): least recently used entries
 * evicted first, bounded by a count of entries and, given a size function, by bytes. Each store,
 * runtime or hub makes its own (no module state), so closing it forgets what it held.
 *
 * A value derived from a thread is kept under a key that names what would make it wrong
 * (createInvalidations): the thread's storage key, the deletion epoch of that key and, when the
 * value depends on stored history, the redaction generation of its lineage. A deletion or a
 * redaction moves the epoch or generation on, so every entry made before it becomes unreachable
 * the moment it commits, whoever holds it and however late a racing read stores it; unreachable
 * entries age out like any other.
 */
import { LRUCache } from 'lru-cache';

export interface CacheOptions<V> {
  /** Most entries held (at least one of the two bounds is required). */
  maxEntries?: number;
  /** Most bytes held, as `sizeOf` estimates them (no byte bound without it). */
  maxBytes?: number;
  /** The estimated bytes of an entry (> 0); required with `maxBytes`. */
  sizeOf?: (value: V, key: string) => number;
}

export interface Cache<V> {
  /** The value under `key`, made the most recently used. */
  get(key: string): V | undefined;
  /** The value under `key`, leaving the order alone. */
  peek(key: string): V | undefined;
  has(key: string): boolean;
  /** Keeps `value` under `key`; false when it alone is bigger than the byte bound (not kept). */
  set(key: string, value: V): boolean;
  delete(key: string): boolean;
  clear(): void;
  /** Entries held. */
  readonly size: number;
  /** Estimated bytes held (0 without a size function). */
  readonly bytes: number;
  /** Entries dropped to stay under a bound since the cache was made. */
  readonly evictions: number;
}

/**
 * A cache bounded by `maxEntries` and/or, with `sizeOf`, by `maxBytes` (least recently used out
 * first).
 */
export function createCache<V extends {}>(options: CacheOptions<V>): Cache<V> {
  const { maxEntries, maxBytes, sizeOf } = options;
  for (const [name, bound] of [
    ['maxEntries', maxEntries],
    ['maxBytes', maxBytes],
  ] as const) {
    if (bound !== undefined && !(Number.isSafeInteger(bound) && bound > 0)) {
      throw new RangeError(`createCache: ${name} must be an integer > 0, not ${bound}`);
    }
  }
  if ((maxBytes === undefined) !== (sizeOf === undefined)) {
    throw new RangeError('createCache: maxBytes and sizeOf go together');
  }
  if (maxEntries === undefined && maxBytes === undefined) {
    throw new RangeError('createCache: give maxEntries, maxBytes or both');
  }
  let evictions = 0;
  const lru = new LRUCache<string, V>({
    ...(maxBytes === undefined || sizeOf === undefined
      ? // A count bound alone is kept as a size of 1 per entry: lru-cache allocates `max` slots
        // up front, a size bound grows with what is held.
        { maxSize: maxEntries!, sizeCalculation: () => 1 }
      : {
          ...(maxEntries === undefined ? {} : { max: maxEntries }),
          maxSize: maxBytes,
          // lru-cache refuses a size below 1; an entry costs at least its slot.
          sizeCalculation: (value: V, key: string) => Math.max(1, Math.ceil(sizeOf(value, key))),
        }),
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') evictions++;
    },
  });
  return {
    get: (key) => lru.get(key),
    peek: (key) => lru.peek(key),
    has: (key) => lru.has(key),
    set(key, value) {
      lru.set(key, value);
      // lru-cache drops an entry above maxSize on its own (and any older value under its key).
      return lru.has(key);
    },
    delete: (key) => lru.delete(key),
    clear: () => lru.clear(),
    get size() {
      return lru.size;
    },
    get bytes() {
      return sizeOf === undefined ? 0 : lru.calculatedSize;
    },
    get evictions() {
      return evictions;
    },
  };
}

/** Between the parts of a derived key; no storage key or lineage root contains it. */
const PART = '\u0000';

/**
 * What invalidates thread-derived values of one runtime: per storage key a deletion epoch, per
 * lineage root a redaction generation. Both are values of one counter that only grows; a key
 * never deleted (or no longer remembered) reads as a floor, raised whenever one is forgotten, so
 * forgetting can make entries of other keys stale (a reload) but never makes a stale entry
 * current again.
 */
export interface Invalidations {
  /**
   * The key of a value derived from thread `threadKey`: take it before reading what the value is
   * made of. With `root` (its lineage root) the value also goes stale when the lineage is
   * redacted; without, only when the thread is deleted.
   */
  keyOf(threadKey: string, root?: string): string;
  /** The current deletion epoch of `threadKey`. */
  epoch(threadKey: string): number;
  /** The current redaction generation of the lineage rooted at `root`. */
  generation(root: string): number;
  /** The thread stored under `threadKey` was deleted (call after commit). */
  deleted(threadKey: string): void;
  /** A redaction rewrote stored history of the lineage rooted at `root` (call after commit). */
  rewritten(root: string): void;
}

/** Epochs and generations remembered by default; older ones are folded into the floor. */
const REMEMBERED = 10_000;

/** Invalidations remembering up to `remembered` deleted keys and as many redacted lineages. */
export function createInvalidations(remembered = REMEMBERED): Invalidations {
  let counter = 0;
  const epochs = createCounters(remembered);
  const generations = createCounters(remembered);
  const epoch = (threadKey: string) => epochs.of(threadKey);
  const generation = (root: string) => generations.of(root);
  return {
    keyOf: (threadKey, root) =>
      root === undefined
        ? `${threadKey}${PART}${epoch(threadKey)}`
        : `${threadKey}${PART}${epoch(threadKey)}${PART}${root}${PART}${generation(root)}`,
    epoch,
    generation,
    deleted: (threadKey) => epochs.bump(threadKey, ++counter),
    rewritten: (root) => generations.bump(root, ++counter),
  };
}

/** Values by name, at most `remembered` of them; a name not remembered reads as the floor. */
function createCounters(remembered: number) {
  let floor = 0;
  const values = new Map<string, number>();
  return {
    of: (name: string) => values.get(name) ?? floor,
    bump(name: string, value: number): void {
      values.delete(name);
      values.set(name, value);
      if (values.size <= remembered) return;
      const [oldest, last] = values.entries().next().value!;
      values.delete(oldest);
      floor = Math.max(floor, last);
    },
  };
}
