/**
 * A long request body is parsed in steps (src/server/json-slices.ts) to exactly what JSON.parse
 * gives, and refused where JSON.parse refuses; its nesting is scanned in steps to the same depth.
 */
import { describe, expect, it } from 'vitest';
import { runSteps } from '../../src/core/graph/index.js';
import { parseJsonSteps } from '../../src/server/json-slices.js';
import { jsonNesting, jsonNestingSteps } from '../../src/server/value-depth.js';

const parse = (text: string) => runSteps(parseJsonSteps(text));

describe('parseJsonSteps', () => {
  it('gives what JSON.parse gives, for a long body of many small values and a few long ones', () => {
    const nodes = Array.from({ length: 5_000 }, (_, i) => ({
      id: `n${i}`,
      payload: {
        i,
        text: `step ${i} ü 😀 "quoted" \\ \n`,
        long: i === 7 ? 'x'.repeat(100_000) : '',
      },
      parents: i === 0 ? [] : [`n${i - 1}`],
      n: [-0.5e-7, 1e21, 0, true, false, null, {}, []],
    }));
    const text = JSON.stringify({
      query: 'mutation { x }',
      variables: { s: { nodes, big: 'y'.repeat(70_000) } },
    });
    const spaced = JSON.stringify({ variables: { s: { nodes } } }, null, 2);
    expect(parse(text)).toEqual(JSON.parse(text));
    expect(parse(spaced)).toEqual(JSON.parse(spaced));
    // Own properties as JSON.parse makes them, __proto__ included.
    const proto = `{"__proto__": {"polluted": 1}, "list": [${'1,'.repeat(40_000)}2]}`;
    const parsed = parse(proto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(parsed).toEqual(JSON.parse(proto));
  });

  it('refuses what JSON.parse refuses', () => {
    const long = `[${'{"a":1},'.repeat(10_000)}`;
    for (const bad of [
      `${long}{"a":1}}`,
      `${long}{"a":1}] x`,
      `${long}{"a" 1}]`,
      `${long}{"a":1},]`,
      `${long}{"a":[1,2]`,
      `{"k": ${long}1]`,
      '',
    ]) {
      expect(() => JSON.parse(bad)).toThrow(SyntaxError);
      expect(() => parse(bad)).toThrow(SyntaxError);
    }
  });
});

describe('jsonNestingSteps', () => {
  it('finds the depth jsonNesting finds, in several steps', () => {
    const text = `${'['.repeat(40)}"[[[\\"]]"${']'.repeat(40)}`.repeat(2_000);
    let steps = 0;
    const stepped = jsonNestingSteps(text, 1_000, 1_024);
    let result = stepped.next();
    for (; !result.done; result = stepped.next()) steps++;
    expect(result.value).toBe(jsonNesting(text));
    expect(result.value).toBe(40);
    expect(steps).toBeGreaterThan(10);
  });
});
