import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { NODE_KINDS, type NodeKind, nodeId, nodeIdentityText } from '../../src/core/identity.js';
import type { JsonValue } from '../../src/core/json.js';

/** A small deterministic PRNG so one generated seed drives a whole rearrangement. */
function rng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

const setKey = (target: Record<string, JsonValue>, key: string, value: JsonValue): void => {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
};

/** The same JSON value, rebuilt with object keys inserted in a shuffled order at every level. */
function reinsert(value: JsonValue, random: () => number): JsonValue {
  if (Array.isArray(value)) return value.map((item) => reinsert(item, random));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, JsonValue> = {};
  for (const key of shuffle(Object.keys(value), random)) {
    setKey(out, key, reinsert(value[key] as JsonValue, random));
  }
  return out;
}

/** JSON text of the value with arbitrary insignificant whitespace between tokens. */
function spaced(value: JsonValue, random: () => number): string {
  const gaps = ['', ' ', '  ', '\n', '\t', '\r\n ', ' \n\t'];
  const ws = (): string => gaps[Math.floor(random() * gaps.length)] as string;
  if (Array.isArray(value)) {
    return `[${ws()}${value.map((item) => spaced(item, random)).join(`${ws()},${ws()}`)}${ws()}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value).map(
      (key) => `${JSON.stringify(key)}${ws()}:${ws()}${spaced(value[key] as JsonValue, random)}`,
    );
    return `{${ws()}${entries.join(`${ws()},${ws()}`)}${ws()}}`;
  }
  return `${ws()}${JSON.stringify(value)}${ws()}`;
}

type Path = (string | number)[];

function leafPaths(value: JsonValue, prefix: Path = []): Path[] {
  if (Array.isArray(value) && value.length > 0) {
    return value.flatMap((item, i) => leafPaths(item, [...prefix, i]));
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0)
      return keys.flatMap((k) => leafPaths(value[k] as JsonValue, [...prefix, k]));
  }
  return [prefix];
}

function replaceAt(value: JsonValue, path: Path, leaf: JsonValue): JsonValue {
  const [head, ...rest] = path;
  if (head === undefined) return leaf;
  if (Array.isArray(value)) {
    return value.map((item, i) => (i === head ? replaceAt(item, rest, leaf) : item));
  }
  const record = value as Record<string, JsonValue>;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(record)) {
    const item = record[key] as JsonValue;
    setKey(out, key, key === head ? replaceAt(item, rest, leaf) : item);
  }
  return out;
}

function leafAt(value: JsonValue, path: Path): JsonValue {
  let current: JsonValue = value;
  for (const step of path)
    current = (current as Record<string | number, JsonValue>)[step] as JsonValue;
  return current;
}

const kind = fc.constantFrom(...NODE_KINDS);
const payload = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<JsonValue>;
const parentId = fc.stringMatching(/^cw_[0-9a-f]{24}$/);
const parents = fc.uniqueArray(parentId, { maxLength: 6 });
const resourceKey = fc.option(fc.string({ maxLength: 12 }), { nil: undefined });
const identity = fc.record({ kind, parents, payload, resourceKey });

const idOf = (input: {
  kind: NodeKind;
  parents: string[];
  payload: unknown;
  resourceKey: string | undefined;
}): string => nodeId(input);

describe('nodeId is invariant under representation changes', () => {
  it('ignores the insertion order of object keys, at every level', () => {
    fc.assert(
      fc.property(identity, fc.integer(), (input, seed) => {
        const reordered = reinsert(input.payload, rng(seed));
        expect(idOf({ ...input, payload: reordered })).toBe(idOf(input));
      }),
      { numRuns: 300 },
    );
  });

  it('ignores whitespace in the JSON text the payload was parsed from', () => {
    fc.assert(
      fc.property(identity, fc.integer(), (input, seed) => {
        const text = spaced(input.payload, rng(seed));
        const reparsed = JSON.parse(text) as JsonValue;
        expect(idOf({ ...input, payload: reparsed })).toBe(idOf(input));
      }),
      { numRuns: 300 },
    );
  });

  it('ignores the order of parents', () => {
    fc.assert(
      fc.property(identity, fc.integer(), (input, seed) => {
        const shuffled = shuffle(input.parents, rng(seed));
        expect(idOf({ ...input, parents: shuffled })).toBe(idOf(input));
      }),
      { numRuns: 300 },
    );
  });

  it('ignores createdAt and sequence', () => {
    fc.assert(
      fc.property(
        identity,
        fc.date({ noInvalidDate: true }),
        fc.date({ noInvalidDate: true }),
        fc.nat(),
        fc.nat(),
        (input, a, b, seqA, seqB) => {
          const first = { ...input, createdAt: a.toISOString(), sequence: seqA + 1 };
          const second = { ...input, createdAt: b.toISOString(), sequence: seqB + 1 };
          expect(nodeId(first)).toBe(nodeId(second));
          expect(nodeIdentityText(first)).not.toMatch(/createdAt|"sequence"/);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('nodeId changes with the content', () => {
  it('changes with the kind', () => {
    fc.assert(
      fc.property(identity, kind, (input, other) => {
        fc.pre(other !== input.kind);
        expect(idOf({ ...input, kind: other })).not.toBe(idOf(input));
      }),
      { numRuns: 300 },
    );
  });

  it('changes when any one payload leaf changes', () => {
    fc.assert(
      fc.property(identity, fc.nat(), payload, (input, pick, replacement) => {
        const paths = leafPaths(input.payload);
        const path = paths[pick % paths.length] as Path;
        const before = leafAt(input.payload, path);
        const leaf =
          canonicalJson(replacement) === canonicalJson(before) ? ['changed', before] : replacement;
        const changed = replaceAt(input.payload, path, leaf);
        expect(canonicalJson(changed)).not.toBe(canonicalJson(input.payload));
        expect(idOf({ ...input, payload: changed })).not.toBe(idOf(input));
      }),
      { numRuns: 300 },
    );
  });

  it('changes when a parent is replaced, added or removed', () => {
    fc.assert(
      fc.property(identity, parentId, fc.nat(), (input, extra, pick) => {
        fc.pre(!input.parents.includes(extra));
        const base = idOf(input);
        expect(idOf({ ...input, parents: [...input.parents, extra] })).not.toBe(base);
        if (input.parents.length > 0) {
          const i = pick % input.parents.length;
          const replaced = input.parents.map((p, j) => (j === i ? extra : p));
          const removed = input.parents.filter((_, j) => j !== i);
          expect(idOf({ ...input, parents: replaced })).not.toBe(base);
          expect(idOf({ ...input, parents: removed })).not.toBe(base);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('changes with resourceKey: absent vs present vs different', () => {
    fc.assert(
      fc.property(
        identity,
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
        (input, a, b) => {
          fc.pre(a !== b);
          const absent = idOf({ ...input, resourceKey: undefined });
          const withA = idOf({ ...input, resourceKey: a });
          const withB = idOf({ ...input, resourceKey: b });
          expect(new Set([absent, withA, withB]).size).toBe(3);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('treats the empty resourceKey as present', () => {
    const base = { kind: 'resource' as const, parents: [], payload: null };
    expect(nodeId({ ...base, resourceKey: '' })).not.toBe(nodeId(base));
  });
});

describe('canonical key order', () => {
  /** Keys in the order canonicalJson wrote them (values are numbers; keys never contain quotes). */
  const writtenKeys = (text: string): string[] =>
    [...text.matchAll(/"([^"]*)":/g)].map((m) => m[1] as string);

  const keyArb = fc.stringMatching(/^[aAbBzZ09_-]{1,4}$/);

  it('orders keys differing in case, digits or "_" by localeCompare', () => {
    fc.assert(
      fc.property(fc.uniqueArray(keyArb, { minLength: 1, maxLength: 12 }), (keys) => {
        const record: Record<string, JsonValue> = {};
        keys.forEach((key, i) => {
          setKey(record, key, i);
        });
        const expected = [...keys].sort((a, b) => a.localeCompare(b));
        expect(writtenKeys(canonicalJson(record))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('differs from code-unit order on such keys', () => {
    const keys = ['b', 'B', 'a', 'A', '_x', 'a1', 'a_', '9', 'Z'];
    const record: Record<string, JsonValue> = {};
    for (const key of keys) setKey(record, key, 0);
    const written = writtenKeys(canonicalJson(record));
    expect(written).toEqual([...keys].sort((a, b) => a.localeCompare(b)));
    expect(written).not.toEqual([...keys].sort());
    // Concretely: "_" and digits before letters, lower case before upper case, "a_" before "a1".
    expect(written).toEqual(['_x', '9', 'a', 'A', 'a_', 'a1', 'b', 'B', 'Z']);
  });

  it('so the id depends on localeCompare order, not on insertion or code-unit order', () => {
    const forward = { B: 1, a: 2, _: 3 };
    const backward = { _: 3, a: 2, B: 1 };
    const body = (p: JsonValue) => nodeId({ kind: 'goal', parents: [], payload: p });
    expect(body(forward)).toBe(body(backward));
    expect(nodeIdentityText({ kind: 'goal', parents: [], payload: forward })).toBe(
      '{"kind":"goal","parents":[],"payload":{"_":3,"a":2,"B":1}}',
    );
  });
});
