import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWeftFailure } from '../../src/core/errors.js';
import { assertJsonSafe, findJsonUnsafe, isJsonSafe } from '../../src/core/log/json-safety.js';

/** fc.jsonValue() may contain -0, which JSON cannot carry; a round trip turns it into 0. */
const plainJson = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

/** Each unsafe kind, with the fragment its reason must contain. */
const UNSAFE: Array<[string, () => unknown, string]> = [
  ['undefined', () => undefined, 'undefined is not JSON'],
  ['NaN', () => Number.NaN, 'NaN is not JSON'],
  ['+Infinity', () => Number.POSITIVE_INFINITY, 'Infinity is not JSON'],
  ['-Infinity', () => Number.NEGATIVE_INFINITY, '-Infinity is not JSON'],
  ['-0', () => -0, '-0 does not survive JSON'],
  ['bigint', () => 10n, 'bigint is not JSON'],
  ['symbol', () => Symbol('s'), 'symbol is not JSON'],
  ['function', () => () => 1, 'function is not JSON'],
  ['Date', () => new Date(0), 'Date instance: convert to an ISO string'],
  ['Map', () => new Map([[1, 2]]), 'Map instance'],
  ['Set', () => new Set([1]), 'Set instance'],
  ['RegExp', () => /x/, 'RegExp instance'],
  ['Uint8Array', () => new Uint8Array(2), 'Uint8Array instance'],
  ['class instance', () => new Point(1, 2), 'Point instance is not plain JSON'],
  ['boxed string', () => new String('s'), 'boxed String'],
];

describe('findJsonUnsafe', () => {
  for (const [name, make, reason] of UNSAFE) {
    it(`reports ${name} at its exact path, nested in objects and arrays`, () => {
      expect(findJsonUnsafe(make())).toEqual({
        path: '$',
        reason: expect.stringContaining(reason),
      });
      const nested = {
        event: { type: 't', payload: { ok: [1, 'two'], items: [0, { x: make() }] } },
      };
      expect(findJsonUnsafe(nested)).toEqual({
        path: '$.event.payload.items[1].x',
        reason: expect.stringContaining(reason),
      });
      expect(findJsonUnsafe([[null], [true, make()]])?.path).toBe('$[1][1]');
      expect(findJsonUnsafe({ a: make() }, '$.entries[4]')?.path).toBe('$.entries[4].a');
    });
  }

  it('quotes keys that are not identifiers', () => {
    expect(findJsonUnsafe({ 'a b': { 'x-y': Number.NaN } })?.path).toBe('$["a b"]["x-y"]');
  });

  it('reports the first problem in key order then index order', () => {
    expect(findJsonUnsafe({ a: [1, { b: 1n }], c: Number.NaN })?.path).toBe('$.a[1].b');
    expect(findJsonUnsafe({ c: Number.NaN, a: [1, { b: 1n }] })?.path).toBe('$.c');
    expect(findJsonUnsafe([[1, [Number.NaN]], undefined])?.path).toBe('$[0][1][0]');
  });

  it('reports a cycle where it closes, naming the ancestor', () => {
    const a: Record<string, unknown> = { v: 1 };
    const root = { a, list: [0] };
    a.inner = { back: a };
    expect(findJsonUnsafe(root)).toEqual({ path: '$.a.inner.back', reason: 'cycle back to $.a' });
    const arr: unknown[] = [1];
    arr.push(arr);
    expect(findJsonUnsafe({ arr })).toEqual({ path: '$.arr[1]', reason: 'cycle back to $.arr' });
  });

  it('accepts the same object reached twice without a cycle', () => {
    const shared = { x: 1 };
    expect(findJsonUnsafe({ a: shared, b: [shared, shared], c: { d: shared } })).toBeNull();
  });

  it('reports a hole in a sparse array', () => {
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point of the test
    const sparse = [1, , 3];
    expect(findJsonUnsafe({ list: sparse })).toEqual({
      path: '$.list[1]',
      reason: expect.stringContaining('array hole'),
    });
    const grown: unknown[] = [];
    grown[2] = 'x';
    expect(findJsonUnsafe(grown)?.path).toBe('$[0]');
  });

  it('reports symbol keys', () => {
    expect(findJsonUnsafe({ a: { [Symbol('k')]: 1 } })).toEqual({
      path: '$.a',
      reason: expect.stringContaining('symbol key Symbol(k)'),
    });
  });

  it('accepts null-prototype objects and handles deep nesting without recursion', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.x = [1, 'a', null, true];
    expect(findJsonUnsafe({ bare })).toBeNull();
    let deep: unknown = Number.NaN;
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(findJsonUnsafe(deep)?.reason).toBe('NaN is not JSON');
  });

  it('accepts every plain JSON value', () => {
    fc.assert(
      fc.property(plainJson, (value) => {
        expect(findJsonUnsafe(value)).toBeNull();
        expect(isJsonSafe(value)).toBe(true);
      }),
    );
  });

  it('finds a bad value planted anywhere in a JSON value, at the planted path', () => {
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(1, 'a', null, true),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(tree, fc.nat(), fc.constantFrom(...UNSAFE), (value, pick, [, make]) => {
        // Collect the paths of all containers, choose one, and add the bad value as its last child.
        const containers: Array<[unknown, string]> = [];
        const walk = (v: unknown, path: string) => {
          if (Array.isArray(v)) {
            containers.push([v, path]);
            v.forEach((item, i) => {
              walk(item, `${path}[${i}]`);
            });
          } else if (typeof v === 'object' && v !== null) {
            containers.push([v, path]);
            for (const [k, item] of Object.entries(v)) walk(item, `${path}.${k}`);
          }
        };
        const root = { wrap: value };
        walk(root, '$');
        const [target, path] = containers[pick % containers.length]!;
        let expected: string;
        if (Array.isArray(target)) {
          expected = `${path}[${target.length}]`;
          target.push(make());
        } else {
          expected = `${path}.zz`;
          (target as Record<string, unknown>).zz = make();
        }
        expect(findJsonUnsafe(root)?.path).toBe(expected);
      }),
    );
  });
});

describe('assertJsonSafe', () => {
  it('throws VALIDATION_FAILED naming the path, and passes plain JSON', () => {
    expect(() => assertJsonSafe({ a: [1, 2] })).not.toThrow();
    try {
      assertJsonSafe({ a: { when: new Date(0) } }, '$.payload');
      expect.unreachable();
    } catch (thrown) {
      expect(isWeftFailure(thrown)).toBe(true);
      if (!isWeftFailure(thrown)) return;
      expect(thrown.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        issues: [{ path: '$.payload.a.when', message: 'Date instance: convert to an ISO string' }],
      });
    }
  });
});
