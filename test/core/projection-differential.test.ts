import { describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import {
  appendNodes,
  createGraph,
  type GraphState,
  type NodeDraft,
} from '../../src/core/graph/index.js';
import { GPT_TOKEN_COUNTERS } from '../../src/core/projection/gpt-tokenizer.js';
import { compileProjection, type ProjectionInput } from '../../src/core/projection/index.js';
import { generateThread } from '../projection/generate.js';
import { referenceProjection } from '../projection/projection-reference.js';

/**
 * Differential test (STYLE: Zod's compile-differential): the optimised compiler must give exactly
 * what the simple reference gives — prompt, selection, reasons, scores, omissions, budget,
 * errors — on every fixture and input.
 */

function build(...batches: NodeDraft[][]): GraphState {
  let graph = (createGraph() as { ok: true; value: GraphState }).value;
  for (const drafts of batches) {
    const result = appendNodes(graph, drafts, '2026-03-01T00:00:00.000Z');
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    graph = result.value.graph;
  }
  return graph;
}

const long = 'lorem ipsum dolor sit amet '.repeat(120);

const FIXTURES: Record<string, () => GraphState> = {
  empty: () => build(),
  'one goal': () => build([{ kind: 'goal', payload: 'just one' }]),
  branches: () =>
    build(
      [{ kind: 'system', payload: { text: 'root' } }],
      [{ kind: 'goal', payload: { text: 'branch out' } }],
      [{ kind: 'inference', payload: 'left branch', advance: false }],
      [{ kind: 'inference', payload: 'right branch', advance: false }],
      [{ kind: 'inference', payload: 'main line' }],
      [{ kind: 'protocol_error', payload: { error: 'bad tool json' } }],
    ),
  'odd payloads and keys': () =>
    build(
      [{ kind: 'system', payload: ['array', 'payload', 42, null, true] }],
      [{ kind: 'goal', payload: { text: 'Ünïcödé Straße café 東京 naïve ΟΔΟΣ' } }],
      [
        {
          kind: 'resource',
          resourceKey: 'weird key\nwith  spaces/and:colons',
          payload: { deep: { a: { b: { c: { d: { e: [1, [2, [3, [4]]]] } } } } } },
        },
      ],
      [
        {
          kind: 'tool_result',
          payload: { tool: 'readFile', path: 'x.md', content: 'no call parent' },
        },
      ],
      [
        {
          kind: 'tool_result',
          payload: { tool: 'readFile', path: 'x.md', content: 'again no call' },
        },
      ],
      [{ kind: 'tool_call', payload: 'bare string call' }],
      [{ kind: 'tool_call', payload: { name: 'grep', arguments: { pattern: 'x' }, call_id: 'a' } }],
      [{ kind: 'tool_call', payload: { name: 'grep', arguments: { pattern: 'x' }, call_id: 'b' } }],
      [{ kind: 'answer', payload: { text: long, list: Array.from({ length: 80 }, (_, i) => i) } }],
      [{ kind: 'semantic', payload: { type: 'memory', key: 'k', content: { nested: long } } }],
    ),
  ...Object.fromEntries(
    [1, 2, 3, 4, 5, 6].map((seed) => [
      `generated ${seed}`,
      () => generateThread({ seed, nodes: 40 + seed * 45, words: 6 + seed * 3 }).graph,
    ]),
  ),
};

const INPUTS: ProjectionInput[] = [
  {},
  { query: 'deploy schema' },
  { query: 'café straße ΟΔΟΣ lorem' },
  { query: 'retry', projectionTargetTokens: 900, maxNodes: 20 },
  { projectionTargetTokens: 400 },
  { projectionTargetTokens: 1, maxPromptTokens: 1500 },
  { maxPromptTokens: 120 },
  { maxNodes: 3, query: 'branch main' },
  { maxNodes: 200, projectionTargetTokens: 2500, query: 'file config read' },
];

function comparable(result: Result<unknown>): unknown {
  if (!result.ok) return { ...result.error, message: undefined };
  const { nodes: _nodes, ...rest } = result.value as Record<string, unknown>;
  return rest;
}

describe('projection compiler vs reference', () => {
  for (const [name, make] of Object.entries(FIXTURES)) {
    it(`agrees on fixture "${name}" for every input (chars)`, () => {
      const graph = make();
      for (const input of INPUTS) {
        const options = { omittedLimit: 25 };
        expect(comparable(compileProjection(graph, input, options)), JSON.stringify(input)).toEqual(
          comparable(referenceProjection(graph, input, options)),
        );
      }
    });
  }

  it('agrees with o200k and cl100k counts and a full omitted list', () => {
    for (const name of ['branches', 'odd payloads and keys', 'generated 2']) {
      const graph = FIXTURES[name]!();
      for (const tokenizer of ['o200k', 'cl100k'] as const) {
        for (const target of [16_000, 700, 250]) {
          const input = { tokenizer, projectionTargetTokens: target, query: 'deploy café' };
          const options = {
            tokenCounters: GPT_TOKEN_COUNTERS,
            omittedLimit: Number.POSITIVE_INFINITY,
          };
          expect(comparable(compileProjection(graph, input, options))).toEqual(
            comparable(referenceProjection(graph, input, options)),
          );
        }
      }
    }
  });

  it('agrees along one history: every append, older values, a branch, a bulk extension', () => {
    // The compiler shares one index across the values of a history (graph-index.ts); check it
    // against the reference whatever order the values are compiled in.
    const { batches } = generateThread({ seed: 9, nodes: 700 });
    let graph = build();
    const values: GraphState[] = [];
    const check = (g: GraphState, input: ProjectionInput) =>
      expect(comparable(compileProjection(g, input, { omittedLimit: 10 }))).toEqual(
        comparable(referenceProjection(g, input, { omittedLimit: 10 })),
      );
    for (const [i, batch] of batches.entries()) {
      const next = appendNodes(graph, batch, '2026-03-01T00:00:00.000Z');
      if (!next.ok) throw new Error(next.error.message);
      graph = next.value.graph;
      values.push(graph);
      if (i < 60 || i % 25 === 0)
        check(graph, { query: 'deploy config', projectionTargetTokens: 1500 });
    }
    for (const old of [values[10]!, values[200]!, values[3]!]) check(old, { query: 'retry' });
    const base = values[150]!;
    const branch = appendNodes(
      base,
      [{ kind: 'goal', payload: { text: 'a different future deploy' } }],
      '2026-03-01T00:00:00.000Z',
    );
    if (!branch.ok) throw new Error(branch.error.message);
    check(branch.value.graph, { query: 'deploy' });
    check(values[values.length - 1]!, { query: 'deploy' });
    check(values[400]!, {});
    check(branch.value.graph, {});
    // A store with sorted clusters, then extended by hundreds of nodes at once.
    const other = generateThread({ seed: 10, nodes: 900 });
    let g = build();
    for (const [i, batch] of other.batches.entries()) {
      const next = appendNodes(g, batch, '2026-03-01T00:00:00.000Z');
      if (!next.ok) throw new Error(next.error.message);
      g = next.value.graph;
      if (i === 20) check(g, {});
    }
    check(g, { query: 'schema' });
  });

  it('agrees along a long history: clusters of over 512 members, older values, reused scratch', () => {
    // Large clusters are hashed from bytes kept in step with appends, older values of them in
    // chunks (clusters.ts), and the hit counters are reused across calls (select.ts).
    const { batches } = generateThread({ seed: 11, nodes: 2_600 });
    let graph = build();
    const values: GraphState[] = [];
    const check = (g: GraphState, input: ProjectionInput) =>
      expect(comparable(compileProjection(g, input, { omittedLimit: 5 }))).toEqual(
        comparable(referenceProjection(g, input, { omittedLimit: 5 })),
      );
    for (const [i, batch] of batches.entries()) {
      const next = appendNodes(graph, batch, '2026-03-01T00:00:00.000Z');
      if (!next.ok) throw new Error(next.error.message);
      graph = next.value.graph;
      values.push(graph);
      if (i === 300 || i >= batches.length - 6) check(graph, { query: 'deploy schema' });
    }
    check(values[values.length - 40]!, { query: 'retry cache' });
    check(graph, {});
    check(values[1_000]!, { query: 'token budget' });
    check(graph, { query: 'config read file', maxNodes: 300 });
  });

  it('would notice a difference (the comparison can fail)', () => {
    const graph = FIXTURES['generated 1']!();
    const a = comparable(compileProjection(graph, { query: 'deploy' }));
    const b = comparable(referenceProjection(graph, { query: 'retry' }));
    expect(a).not.toEqual(b);
  });
});
