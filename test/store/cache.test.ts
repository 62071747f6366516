/**
 * The one cache utility (src/store/cache.ts): least recently used out first, under a count and a
 * byte bound; and the keys of thread-derived values, which a deletion or a redaction makes
 * unreachable however many of them the invalidations remember.
 */
import { describe, expect, it } from 'vitest';
import { createCache, createInvalidations } from '../../src/store/cache.js';

describe('createCache', () => {
  it('evicts the least recently used entries until the rest fit the byte bound', () => {
    const cache = createCache<string>({ maxBytes: 100, sizeOf: (value) => value.length });
    cache.set('a', 'x'.repeat(40));
    cache.set('b', 'x'.repeat(40));
    expect(cache.get('a')).toBeDefined(); // `a` is now the most recently used
    cache.set('c', 'x'.repeat(40));
    expect(cache.has('b')).toBe(false);
    expect(cache.has('a')).toBe(true);
    expect(cache.has('c')).toBe(true);
    expect(cache.bytes).toBe(80);
    expect(cache.evictions).toBe(1);

    // Two small ones push out the rest of what no longer fits, oldest first.
    cache.set('d', 'x'.repeat(30));
    expect([...['a', 'c', 'd'].filter((k) => cache.has(k))]).toEqual(['c', 'd']);
    expect(cache.bytes).toBeLessThanOrEqual(100);
  });

  it('does not keep an entry bigger than the byte bound on its own, nor an older value under its key', () => {
    const cache = createCache<string>({ maxBytes: 10, sizeOf: (value) => value.length });
    expect(cache.set('k', 'small')).toBe(true);
    expect(cache.set('k', 'x'.repeat(11))).toBe(false);
    expect(cache.get('k')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('evicts by count, and by whichever bound is reached first when given both', () => {
    const counted = createCache<number>({ maxEntries: 3 });
    for (let i = 0; i < 5; i++) counted.set(`k${i}`, i);
    expect(counted.size).toBe(3);
    expect(counted.has('k1')).toBe(false);
    expect(counted.has('k4')).toBe(true);
    expect(counted.evictions).toBe(2);

    const both = createCache<string>({ maxEntries: 2, maxBytes: 1000, sizeOf: (v) => v.length });
    both.set('a', 'x');
    both.set('b', 'x');
    both.set('c', 'x');
    expect(both.size).toBe(2);
    both.set('big', 'x'.repeat(1000));
    expect(both.size).toBe(1);
  });

  it('refuses a cache without a bound, or a byte bound without a size', () => {
    expect(() => createCache({})).toThrow(RangeError);
    expect(() => createCache({ maxBytes: 10 })).toThrow(RangeError);
    expect(() => createCache({ maxEntries: 0 })).toThrow(RangeError);
  });
});

describe('createInvalidations', () => {
  it('moves a deleted thread, and only it, to a new key', () => {
    const inv = createInvalidations();
    const before = inv.keyOf('t');
    const other = inv.keyOf('u');
    inv.deleted('t');
    expect(inv.keyOf('t')).not.toBe(before);
    expect(inv.keyOf('u')).toBe(other);
  });

  it('moves every key under a lineage to a new one when the lineage is rewritten', () => {
    const inv = createInvalidations();
    const fork = inv.keyOf('fork', 'root');
    const own = inv.keyOf('other', 'other');
    const undeleted = inv.keyOf('fork');
    inv.rewritten('root');
    expect(inv.keyOf('fork', 'root')).not.toBe(fork);
    expect(inv.keyOf('other', 'other')).toBe(own);
    // A value that depends on nothing of stored history keeps its key.
    expect(inv.keyOf('fork')).toBe(undeleted);
  });

  it('never makes a key taken before a deletion current again, however much it forgets', () => {
    const inv = createInvalidations(4);
    const stale = new Map<string, Set<string>>();
    // A fixed pseudo-random walk over few threads (more than the 4 remembered).
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let step = 0; step < 5000; step++) {
      const thread = `t${next() % 12}`;
      const root = `r${next() % 3}`;
      const key = inv.keyOf(thread, root);
      expect(stale.get(thread)?.has(key) ?? false).toBe(false);
      if (next() % 4 === 0) {
        const gone = stale.get(thread) ?? new Set<string>();
        gone.add(inv.keyOf(thread, root));
        stale.set(thread, gone);
        inv.deleted(thread);
      }
      if (next() % 9 === 0) {
        // Every key of the lineage taken so far goes stale for every thread under it.
        for (let t = 0; t < 12; t++) {
          const gone = stale.get(`t${t}`) ?? new Set<string>();
          gone.add(inv.keyOf(`t${t}`, root));
          stale.set(`t${t}`, gone);
        }
        inv.rewritten(root);
      }
    }
  });
});
