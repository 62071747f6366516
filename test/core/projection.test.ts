import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appendNodes,
  createGraph,
  exportAgentState,
  type GraphState,
  getResourceHead,
  importAgentState,
  type NodeDraft,
} from '../../src/core/graph/index.js';
import {
  GPT_TOKEN_COUNTERS,
  O200K_TOKEN_COUNTER,
} from '../../src/core/projection/gpt-tokenizer.js';
import {
  compileProjection,
  type Projection,
  type ProjectionInput,
} from '../../src/core/projection/index.js';
import { generateThread } from '../projection/generate.js';

const AT = '2026-03-01T00:00:00.000Z';

function build(...batches: NodeDraft[][]): GraphState {
  const created = createGraph();
  if (!created.ok) throw new Error('createGraph failed');
  let graph = created.value;
  for (const drafts of batches) {
    const result = appendNodes(graph, drafts, AT);
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    graph = result.value.graph;
  }
  return graph;
}

function project(graph: GraphState, input: ProjectionInput = {}, omittedLimit = 0): Projection {
  const result = compileProjection(graph, input, {
    omittedLimit,
    tokenCounters: GPT_TOKEN_COUNTERS,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

const filler = (n: number, word = 'routine'): NodeDraft[][] =>
  Array.from({ length: n }, (_, i) => [
    { kind: 'inference', payload: { text: `${word} step ${i} nothing notable` } },
  ]);

const read = (path: string, offset: number, content: string): NodeDraft[] => [
  { kind: 'tool_call', payload: { name: 'read_file', args: { path, offset } } },
  { kind: 'tool_result', payload: { tool: 'read_file', content } },
];

const sha16 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

describe('projection: layers and explanations', () => {
  const graph = generateThread({ seed: 11, nodes: 400 }).graph;
  const view = project(graph, { query: 'deploy schema' }, Number.POSITIVE_INFINITY);

  it('renders the digest and the four layers, in order, each line non-empty and trimmed', () => {
    const tags = ['DIGEST', 'BIG_BRAIN', 'PERIPHERAL', 'FOCUS', 'TIMELINE'];
    let at = -1;
    for (const tag of tags) {
      const open = view.prompt.indexOf(`<${tag}>`);
      expect(open).toBeGreaterThan(at);
      at = view.prompt.indexOf(`</${tag}>`);
      expect(at).toBeGreaterThan(open);
    }
    for (const line of view.prompt.split('\n')) {
      expect(line).not.toBe('');
      expect(line).toBe(line.trim());
    }
    expect(view.prompt).toContain(`<FOCUS>\n${view.layers.focus}\n</FOCUS>`);
    expect(view.prompt).toContain(`<DIGEST>\n${view.digest}\n</DIGEST>`);
    expect(view.layers.focus.split('\n')).toHaveLength(view.nodeIds.length);
  });

  it('lists FOCUS nodes in sequence order with their reasons and scores', () => {
    const seqs = view.selected.map((s) => s.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(view.nodes.map((n) => n.id)).toEqual(view.nodeIds);
    for (const s of view.selected) {
      expect(s.reasons.length).toBeGreaterThan(0);
      expect(s.score).toBeGreaterThan(0);
      expect(s.score).toBeLessThanOrEqual(1);
      expect(view.layers.focus).toContain(`#${s.sequence} ${s.kind} ${s.id}`);
    }
    const last = view.selected[view.selected.length - 1]!;
    expect(last.reasons).toContain('frontier');
    expect(view.selected.some((s) => s.reasons.includes('latest_system'))).toBe(true);
    expect(view.selected.some((s) => s.reasons.includes('latest_goal'))).toBe(true);
  });

  it('lists every omitted node with its score, best first', () => {
    expect(view.omitted).toHaveLength(view.omittedCount);
    expect(view.omittedCount).toBe(graph.count - view.nodeIds.length);
    const shown = new Set(view.nodeIds);
    for (const o of view.omitted) expect(shown.has(o.id)).toBe(false);
    for (let i = 1; i < view.omitted.length; i++) {
      expect(view.omitted[i - 1]!.score).toBeGreaterThanOrEqual(view.omitted[i]!.score);
    }
    expect(new Set(view.omitted.map((o) => o.reason))).toEqual(
      new Set(['superseded', 'duplicate', 'not_selected']),
    );
  });

  it('names clusters after the sorted ids of their members, and fingerprints the graph', () => {
    const state = exportAgentState(graph);
    const goalIds = state.nodes.filter((n) => n.kind === 'goal').map((n) => n.id);
    const pin = view.clusters.bigBrain.find((c) => c.label === 'goal')!;
    expect(pin.size).toBe(goalIds.length);
    expect(pin.id).toBe(`cl_${sha16([...goalIds].sort().join('\n'))}`);
    expect(view.layers.bigBrain).toContain(`[${pin.id}] goal size=${goalIds.length}`);
    expect(view.digest).toContain(`graph=${view.fingerprint} nodes=${graph.count}`);
    const other = project(build([{ kind: 'goal', payload: 'x' }]));
    expect(other.fingerprint).not.toBe(view.fingerprint);
  });

  it('keeps TIMELINE to events in causal order', () => {
    const seqs = view.layers.timeline.split('\n').map((line) => {
      const [, seq, kind] = /^#(\d+) (\w+)/.exec(line)!;
      expect(['goal', 'inference', 'answer', 'verification', 'protocol_error']).toContain(kind);
      return Number(seq);
    });
    expect(seqs.length).toBeGreaterThan(0);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('accepts a thread state holding the graph', () => {
    const result = compileProjection({ graph }, { query: 'deploy schema' });
    expect(result.ok && result.value.prompt).toBe(view.prompt);
  });

  it('keeps the parent call of a frontier result as operational closure', () => {
    const g = build(
      [{ kind: 'system', payload: 'sys' }],
      [{ kind: 'goal', payload: 'look at the file' }],
      ...filler(30),
      read('src/a.ts', 0, 'contents'),
    );
    const result = compileProjection(g, {}, { recentNodes: 0 });
    if (!result.ok) throw new Error('failed');
    const call = result.value.selected.find((s) => s.kind === 'tool_call')!;
    expect(call.reasons).toEqual(['closure']);
    expect(result.value.selected.find((s) => s.kind === 'tool_result')!.reasons).toEqual([
      'frontier',
    ]);
  });
});

describe('projection: supersession and collapse', () => {
  it('shows current resource and semantic heads, never superseded versions', () => {
    const graph = build(
      [{ kind: 'system', payload: 'sys' }],
      [{ kind: 'goal', payload: 'edit config' }],
      [
        {
          kind: 'resource',
          resourceKey: 'resource:file:a.ts',
          payload: { body: 'OLD-BODY-ALPHA' },
        },
      ],
      [
        {
          kind: 'semantic',
          payload: { type: 'preference', key: 'indent', content: 'TABS-PLEASE' },
        },
      ],
      ...filler(20),
      [{ kind: 'resource', resourceKey: 'resource:file:a.ts', payload: { body: 'NEW-BODY-BETA' } }],
      [
        {
          kind: 'semantic',
          payload: { type: 'preference', key: 'indent', content: 'SPACES-PLEASE' },
        },
      ],
      ...filler(40, 'later'),
    );
    const view = project(graph, { query: 'body alpha tabs please' }, Number.POSITIVE_INFINITY);
    const head = getResourceHead(graph, 'resource:file:a.ts')!;
    const memory = getResourceHead(graph, 'semantic:preference:indent')!;
    for (const node of [head, memory]) {
      expect(view.nodeIds).toContain(node.id);
      expect(view.selected.find((s) => s.id === node.id)!.reasons).toContain('current_resource');
    }
    expect(view.prompt).toContain('NEW-BODY-BETA');
    expect(view.prompt).toContain('SPACES-PLEASE');
    expect(view.prompt).not.toContain('OLD-BODY-ALPHA');
    expect(view.prompt).not.toContain('TABS-PLEASE');
    const superseded = view.omitted.filter((o) => o.reason === 'superseded');
    expect(superseded.map((o) => o.replacedBy).sort()).toEqual([head.id, memory.id].sort());
  });

  it('leaves one of 60 identical reads; reads of the same file at other offsets survive', () => {
    const graph = build(
      [{ kind: 'system', payload: 'sys' }],
      [{ kind: 'goal', payload: 'inspect a.ts' }],
      read('src/a.ts', 200, 'tail of the file'),
      ...Array.from({ length: 60 }, (_, i) => read('src/a.ts', 0, `head of the file, read ${i}`)),
      [{ kind: 'answer', payload: 'done' }],
    );
    const view = project(graph, { maxNodes: 500 }, Number.POSITIVE_INFINITY);
    const shown = view.nodes.filter((n) => n.kind === 'tool_call' || n.kind === 'tool_result');
    const calls = shown.filter((n) => n.kind === 'tool_call');
    expect(
      calls.map((n) => (n.payload as { args: { offset: number } }).args.offset).sort(),
    ).toEqual([0, 200]);
    expect(shown.filter((n) => n.kind === 'tool_result')).toHaveLength(2);
    expect(view.prompt).toContain('head of the file, read 59');
    expect(view.prompt).not.toContain('head of the file, read 58');
    expect(view.prompt).toContain('tail of the file');
    expect(view.omitted.filter((o) => o.reason === 'duplicate')).toHaveLength(118);
  });

  it('collapses calls with equal arguments but different call ids', () => {
    const call = (id: string): NodeDraft[] => [
      { kind: 'tool_call', payload: { name: 'search', args: { q: 'weft' }, id } },
    ];
    const graph = build([{ kind: 'goal', payload: 'g' }], call('c1'), ...filler(3), call('c2'));
    const view = project(graph, { maxNodes: 100 });
    expect(view.nodes.filter((n) => n.kind === 'tool_call')).toHaveLength(1);
  });
});

describe('projection: query relevance', () => {
  const history = (): GraphState =>
    build(
      [{ kind: 'system', payload: 'sys' }],
      [{ kind: 'goal', payload: 'long task' }],
      ...filler(5),
      [{ kind: 'inference', payload: { text: 'the zeppelin hangar needs a permit' } }],
      [{ kind: 'inference', payload: { text: 'the balloon hangar needs a permit' } }],
      ...filler(2000),
    );
  const graph = history();
  const seqOf = (text: string) =>
    exportAgentState(graph).nodes.find((n) => JSON.stringify(n.payload).includes(text))!;

  it('includes a deep-history node that matches the query, not its non-matching neighbour', () => {
    const view = project(graph, { query: 'Zeppelin?' });
    const match = seqOf('zeppelin');
    const other = seqOf('balloon');
    expect(match.sequence).toBeLessThan(10);
    expect(view.nodeIds).toContain(match.id);
    expect(view.selected.find((s) => s.id === match.id)!.reasons).toEqual(['query_match']);
    expect(view.nodeIds).not.toContain(other.id);
  });

  it('does not include it without the query', () => {
    expect(project(graph).nodeIds).not.toContain(seqOf('zeppelin').id);
  });

  it('matches whole terms only', () => {
    expect(project(graph, { query: 'zeppelins' }).nodeIds).not.toContain(seqOf('zeppelin').id);
  });
});

describe('projection: bounds', () => {
  const graphs = [7, 8, 9].map((seed) => generateThread({ seed, nodes: 150 + seed * 20 }).graph);

  it('stays under the target whenever the mandatory part fits, never above the ceiling', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 50, max: 6000 }),
        fc.integer({ min: 50, max: 8000 }),
        fc.integer({ min: 1, max: 80 }),
        fc.constantFrom<ProjectionInput['tokenizer']>('chars', 'o200k', 'cl100k'),
        fc.constantFrom('', 'deploy', 'retry cache schema'),
        (g, target, max, maxNodes, tokenizer, query) => {
          const input = {
            projectionTargetTokens: target,
            maxPromptTokens: max,
            maxNodes,
            tokenizer,
            query,
          };
          const result = compileProjection(graphs[g]!, input, {
            tokenCounters: GPT_TOKEN_COUNTERS,
          });
          if (!result.ok) {
            expect(result.error.code).toBe('PROJECTION_OVERFLOW');
            if (result.error.code !== 'PROJECTION_OVERFLOW') return;
            expect(result.error.maxPromptTokens).toBe(max);
            expect(result.error.requiredTokens).toBeGreaterThan(max);
            return;
          }
          const view = result.value;
          const counter = tokenizer === 'chars' ? undefined : GPT_TOKEN_COUNTERS[tokenizer!]!;
          const exact = counter ? counter.count(view.prompt) : Math.ceil(view.prompt.length / 4);
          expect(view.tokenEstimate).toBe(exact);
          expect(view.tokenEstimate).toBeLessThanOrEqual(max);
          const effectiveTarget = Math.min(target, max);
          if (view.budget.requiredTokens <= effectiveTarget) {
            expect(view.tokenEstimate).toBeLessThanOrEqual(effectiveTarget);
          } else {
            expect(view.tokenEstimate).toBe(view.budget.requiredTokens);
          }
          const mandatory = view.selected.filter((s) => s.mandatory).length;
          expect(view.nodeIds.length).toBeLessThanOrEqual(Math.max(maxNodes, mandatory));
        },
      ),
      { numRuns: 120, seed: 5 },
    );
  });

  it('fails with PROJECTION_OVERFLOW naming both figures before returning anything', () => {
    const result = compileProjection(graphs[0]!, { maxPromptTokens: 20 });
    expect(result.ok).toBe(false);
    if (result.ok || result.error.code !== 'PROJECTION_OVERFLOW')
      throw new Error('expected overflow');
    expect(result.error.maxPromptTokens).toBe(20);
    expect(result.error.requiredTokens).toBeGreaterThan(20);
    const fits = compileProjection(graphs[0]!, {
      maxPromptTokens: result.error.requiredTokens,
      projectionTargetTokens: 1,
    });
    expect(fits.ok && fits.value.tokenEstimate).toBe(result.error.requiredTokens);
  });

  it('trims the oldest removable nodes first, then shrinks payloads', () => {
    const graph = graphs[1]!;
    const full = project(graph);
    const prompt = full.tokenEstimate;
    const trimmed = project(graph, { projectionTargetTokens: prompt - 200 });
    expect(trimmed.budget.shrinkLevel).toBe(0);
    expect(trimmed.budget.trimmed).toBeGreaterThan(0);
    const dropped = full.selected.filter((s) => !trimmed.nodeIds.includes(s.id));
    const kept = trimmed.selected.filter((s) => !s.mandatory && !s.reasons.includes('query_match'));
    expect(dropped.every((d) => d.reasons.every((r) => r === 'closure' || r === 'relevance'))).toBe(
      true,
    );
    for (const k of kept) for (const d of dropped) expect(d.sequence).toBeLessThan(k.sequence);
    const shrunk = project(graph, { projectionTargetTokens: trimmed.budget.requiredTokens + 10 });
    expect(shrunk.budget.shrinkLevel).toBeGreaterThan(0);
    expect(shrunk.tokenEstimate).toBeLessThanOrEqual(trimmed.budget.requiredTokens + 10);
  });

  it('clamps the target to the ceiling and applies the defaults', () => {
    const view = project(graphs[0]!, { projectionTargetTokens: 90_000, maxPromptTokens: 5_000 });
    expect(view.budget).toMatchObject({ projectionTargetTokens: 5_000, maxPromptTokens: 5_000 });
    expect(project(graphs[0]!).budget).toMatchObject({
      projectionTargetTokens: 16_000,
      maxPromptTokens: 64_000,
      maxNodes: 48,
    });
  });
});

describe('projection: input and tokenizers', () => {
  const graph = generateThread({ seed: 2, nodes: 120 }).graph;

  it('refuses bad input with one VALIDATION_FAILED listing every problem', () => {
    const result = compileProjection(graph, {
      maxNodes: 0,
      maxPromptTokens: 1.5,
      projectionTargetTokens: -1,
      tokenizer: 'gpt2' as never,
    });
    if (result.ok || result.error.code !== 'VALIDATION_FAILED') throw new Error('expected failure');
    expect(result.error.issues.map((i) => i.path).sort()).toEqual([
      '$.maxNodes',
      '$.maxPromptTokens',
      '$.projectionTargetTokens',
      '$.tokenizer',
    ]);
  });

  it('says how to load a real tokenizer when none was passed', () => {
    const result = compileProjection(graph, { tokenizer: 'o200k' });
    if (result.ok || result.error.code !== 'VALIDATION_FAILED') throw new Error('expected failure');
    expect(result.error.message).toContain('GPT_TOKEN_COUNTERS');
  });

  it('counts with o200k and cl100k exactly, special-token text included', () => {
    const g = build([
      { kind: 'inference', payload: { text: 'ends with <|endoftext|> and <|im_start|> markers' } },
    ]);
    for (const tokenizer of ['o200k', 'cl100k'] as const) {
      const view = project(g, { tokenizer });
      expect(view.tokenizer).toBe(tokenizer);
      expect(view.tokenEstimate).toBe(GPT_TOKEN_COUNTERS[tokenizer]!.count(view.prompt));
      expect(view.tokenEstimate).not.toBe(Math.ceil(view.prompt.length / 4));
    }
    expect(O200K_TOKEN_COUNTER.count('<|endoftext|>')).toBeGreaterThan(1);
  });
});

describe('projection: determinism', () => {
  it('gives the same prompt for the same content whatever its key order or object identity', () => {
    const { graph } = generateThread({ seed: 21, nodes: 300 });
    const state = exportAgentState(graph);
    // Re-create every payload with its keys in reverse order: same content, same ids.
    const reversed = JSON.parse(JSON.stringify(state), (_key, value: unknown) =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).reverse())
        : value,
    );
    const imported = importAgentState(reversed);
    if (!imported.ok) throw new Error(JSON.stringify(imported.error));
    for (const input of [{}, { query: 'deploy retry' }, { projectionTargetTokens: 700 }]) {
      expect(project(imported.value, input).prompt).toBe(project(graph, input).prompt);
    }
  });
});
