import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { nodeId } from '../../src/core/identity.js';

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
