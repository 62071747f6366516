import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalObject, OMIT, quoteJson } from '../../src/core/canonical.js';
import { nodeId, nodeIdentityText } from '../../src/core/identity.js';

describe('canonicalJson', () => {
  it('orders keys by localeCompare, not code units', () => {
    // Code-unit order would put 'B' before 'a' and '_' after uppercase letters.
    expect(canonicalJson({ b: 1, B: 2, a: 3, _x: 4, a1: 5, a_: 6 })).toBe(
      '{"_x":4,"a":3,"a_":6,"a1":5,"b":1,"B":2}',
    );
  });
  it('drops undefined object entries and writes non-finite numbers quoted', () => {
    expect(canonicalJson({ a: undefined, b: Number.NaN, c: -Infinity, d: [undefined, 1.5] })).toBe(
      '{"b":"NaN","c":"-Infinity","d":[null,1.5]}',
    );
  });
});

describe('nodeId', () => {
  it('is cw_ plus 24 hex characters', () => {
    expect(nodeId({ kind: 'goal', parents: [], payload: { text: 'hi' } })).toMatch(
      /^cw_[0-9a-f]{24}$/,
    );
  });
});

describe('nodeIdentityText', () => {
  it('equals the canonical JSON of {kind, parents (sorted), payload, resourceKey}', () => {
    const cases = [
      { kind: 'goal', parents: ['cw_b', 'cw_a'], payload: { Z: 1, a: [1, { y: 2, X: 3 }] } },
      { kind: 'resource', parents: [], payload: 'text', resourceKey: 'file:a' },
      { kind: 'answer', parents: ['cw_1'], payload: null },
      { kind: 'answer', parents: ['cw_1'], payload: undefined },
    ];
    for (const input of cases) {
      const body: Record<string, unknown> = {
        kind: input.kind,
        parents: [...input.parents].sort(),
        payload: input.payload,
      };
      if ('resourceKey' in input) body.resourceKey = input.resourceKey;
      expect(nodeIdentityText(input)).toBe(canonicalJson(body));
    }
  });
});

describe('canonicalJson shape cache', () => {
  it('never confuses shapes whose key lists join to the same text', () => {
    // Each pair would share a cache id if hits were not confirmed key by key.
    expect(canonicalJson({ '': {} })).toBe('{"":{}}');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson({ 'a\u0000b': 1 })).toBe('{"a\\u0000b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe('{"a":1,"b":2}');
    expect(canonicalJson({ 'a\u0000b': 1, c: 2 })).toBe('{"a\\u0000b":1,"c":2}');
    expect(canonicalJson({ a: 1, 'b\u0000c': 2 })).toBe('{"a":1,"b\\u0000c":2}');
  });
  it('agrees with an uncached reference on many shapes', () => {
    const reference = (value: unknown): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value);
      if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
      const entries = Object.entries(value).sort(([a], [b]) => a.localeCompare(b));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(',')}}`;
    };
    const keys = ['', 'a', 'A', 'b', '_', 'a1', 'a_', 'a\u0000', '\u0000a', 'é', 'e'];
    for (let mask = 0; mask < 1 << 8; mask++) {
      const object: Record<string, unknown> = {};
      keys.forEach((key, i) => {
        if (mask & (1 << (i % 8))) object[key] = { [key]: i };
      });
      expect(canonicalJson(object)).toBe(reference(object));
    }
  });
});

describe('canonicalObject', () => {
  it('writes keys in canonical order, honouring overrides and OMIT', () => {
    const text = canonicalObject({ b: 1, a: { y: 1, x: 2 }, c: 'skip', d: undefined }, (key) =>
      key === 'c' ? OMIT : key === 'b' ? '"B"' : undefined,
    );
    expect(text).toBe('{"a":{"x":2,"y":1},"b":"B"}');
  });
});

describe('quoteJson', () => {
  it('agrees with JSON.stringify on every kind of character', () => {
    const samples = [
      '',
      'plain text',
      'quote " and backslash \\',
      'controls \u0000 \u0001 \n \t \u001f and DEL \u007f',
      'line separators \u2028 \u2029',
      'pair \ud83d\ude00 lone high \ud83d and lone low \ude00',
      'é ü 中文',
    ];
    for (let code = 0; code < 0x80; code++) samples.push(`a${String.fromCharCode(code)}b`);
    for (const text of samples) expect(quoteJson(text)).toBe(JSON.stringify(text));
  });
});

describe('canonicalJson and an own "__proto__" key', () => {
  it('writes it as an ordinary key, on the fast and the general path', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":null}'))).toBe('{"__proto__":null}');
    expect(canonicalJson(JSON.parse('{"z":1,"__proto__":{"b":1,"a":2}}'))).toBe(
      '{"__proto__":{"a":2,"b":1},"z":1}',
    );
  });
});
