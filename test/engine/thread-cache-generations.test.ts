/**
 * The thread cache serves no state derived before a redaction of its lineage:
 * states are kept under the derivation they were read under (lineage root, redaction
 * generation), and a redaction moves the generation on, so no list of threads or caches has to
 * be remembered. Checked on the cache itself, with states folded by the core.
 */
import { describe, expect, it } from 'vitest';
import { createThreadMachine, type ThreadState } from '../../src/core/thread/index.js';
import { createThreadCache } from '../../src/engine/thread-cache.js';

const state = (): ThreadState => ({ ...createThreadMachine().initial });

describe('thread cache generations', () => {
  it('stops serving every state of a lineage once it is rewritten, and only of that lineage', () => {
    const cache = createThreadCache();
    const source = state();
    const fork = state();
    const other = state();
    cache.set('src', source, { texts: [], under: cache.derivation('src') });
    // A fork's state is derived under its source's lineage (fork.ts).
    cache.set('fork', fork, { texts: [], under: cache.derivation('src') });
    cache.set('other', other, { texts: [], under: cache.derivation('other') });
    expect(cache.get('fork')).toBe(fork);

    cache.rewritten('src');
    expect(cache.get('src')).toBeUndefined();
    expect(cache.get('fork')).toBeUndefined();
    expect(cache.get('other')).toBe(other);
    expect(cache.stats().threads).toBe(1);
  });

  it('does not keep a state read across a redaction, nor one derived under nothing known', () => {
    const cache = createThreadCache();
    const before = cache.derivation('src');
    cache.rewritten('src');
    cache.set('fork', state(), { texts: [], under: before });
    expect(cache.get('fork')).toBeUndefined();

    cache.set('loose', state(), { texts: [] });
    expect(cache.get('loose')).toBeUndefined();

    const fresh = state();
    cache.set('fork', fresh, { texts: [], under: cache.derivation('src') });
    expect(cache.get('fork')).toBe(fresh);
  });

  it('gives a state folded from another the derivation of the one it was folded from', () => {
    const cache = createThreadCache();
    const first = state();
    cache.set('t', first, { texts: [], under: cache.derivation('t') });
    const next = { ...first, length: 1 };
    cache.set('t', next, { from: first, texts: ['{}'] });
    expect(cache.get('t')).toBe(next);
    expect(cache.derivationOf(next)).toEqual(cache.derivationOf(first));

    cache.rewritten('t');
    // A command that loaded `next` before the redaction and commits after it: not kept.
    cache.set('t', { ...next, length: 2 }, { from: next, texts: ['{}'] });
    expect(cache.get('t')).toBeUndefined();
  });

  it('treats a lineage whose generation it forgot as rewritten, never as current', () => {
    const cache = createThreadCache();
    const quiet = state();
    cache.set('quiet', quiet, { texts: [], under: cache.derivation('quiet') });
    // More redacted lineages than it remembers: the oldest generations fold into the floor.
    for (let i = 0; i <= 10_000; i++) cache.rewritten(`busy-${i}`);
    expect(cache.get('quiet')).toBeUndefined();
    const again = state();
    cache.set('quiet', again, { texts: [], under: cache.derivation('quiet') });
    expect(cache.get('quiet')).toBe(again);
  });
});
