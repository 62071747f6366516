import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunMap } from '../../src/core/thread/run-map.js';

const contents = <V>(map: ReadonlyMap<string, V>) => [...map];

describe('RunMap (the persistent runs map of a thread state)', () => {
  it('reads like a Map: get, has, size, insertion order, a replaced value keeps its place', () => {
    const a = RunMap.empty<number>().set('r1', 1).set('r2', 2).set('r3', 3);
    const b = a.set('r2', 20);
    expect(contents(b)).toEqual([
      ['r1', 1],
      ['r2', 20],
      ['r3', 3],
    ]);
    expect([...b.keys()]).toEqual(['r1', 'r2', 'r3']);
    expect([...b.values()]).toEqual([1, 20, 3]);
    expect(b.size).toBe(3);
    expect(b.get('r2')).toBe(20);
    expect(b.has('r4')).toBe(false);
    expect(b.get('r4')).toBeUndefined();
    expect(Object.fromEntries(b)).toEqual({ r1: 1, r2: 20, r3: 3 });
    const seen: Array<[string, number]> = [];
    b.forEach((value, key, map) => {
      expect(map).toBe(b);
      seen.push([key, value]);
    });
    expect(seen).toEqual(contents(b));
    expect(new Map(b)).toEqual(new Map(contents(b)));
  });

  it('leaves every earlier value answering as before, also when two values diverge', () => {
    const base = RunMap.empty<string>().set('a', 'a0');
    const left = base.set('b', 'left');
    // `base` is now behind the shared key index: adding a key must not reveal or clobber `b`.
    const right = base.set('c', 'right');
    const leftMore = left.set('a', 'a1').set('d', 'd');
    expect(contents(base)).toEqual([['a', 'a0']]);
    expect(base.has('b')).toBe(false);
    expect(contents(left)).toEqual([
      ['a', 'a0'],
      ['b', 'left'],
    ]);
    expect(contents(right)).toEqual([
      ['a', 'a0'],
      ['c', 'right'],
    ]);
    expect(right.has('b')).toBe(false);
    expect(left.has('c')).toBe(false);
    expect(contents(leftMore)).toEqual([
      ['a', 'a1'],
      ['b', 'left'],
      ['d', 'd'],
    ]);
  });

  it('from() copies a Map in its order and returns a RunMap unchanged', () => {
    const map = new Map([
      ['x', 1],
      ['y', 2],
    ]);
    const runs = RunMap.from(map);
    expect(contents(runs)).toEqual(contents(map));
    expect(RunMap.from(runs)).toBe(runs);
  });

  it('matches copy-on-write Maps over generated histories of sets on any earlier value', () => {
    const op = fc.record({
      from: fc.nat(),
      key: fc.constantFrom('r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6'),
      value: fc.integer(),
    });
    // Enough distinct keys to span several chunks.
    const many = fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 120 });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), many, (ops, bulk) => {
        const maps: Array<ReadonlyMap<string, number>> = [new Map()];
        const runMaps: RunMap<number>[] = [RunMap.empty()];
        for (const n of bulk) {
          maps.push(new Map(maps[maps.length - 1]!).set(`k${n}`, n));
          runMaps.push(runMaps[runMaps.length - 1]!.set(`k${n}`, n));
        }
        for (const { from, key, value } of ops) {
          const at = from % maps.length;
          maps.push(new Map(maps[at]!).set(key, value));
          runMaps.push(runMaps[at]!.set(key, value));
        }
        for (let i = 0; i < maps.length; i++) {
          expect(contents(runMaps[i]!)).toEqual(contents(maps[i]!));
          expect(runMaps[i]!.size).toBe(maps[i]!.size);
          for (const key of ['r0', 'r3', 'r6', 'k0', 'k200']) {
            expect(runMaps[i]!.get(key)).toBe(maps[i]!.get(key));
            expect(runMaps[i]!.has(key)).toBe(maps[i]!.has(key));
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
