import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import {
  type AppendResult,
  appendNodes,
  createGraph,
  createSemanticDraft,
  DEFAULT_NODE_TYPES,
  exportAgentState,
  type GraphState,
  getFrontier,
  getMemory,
  getNode,
  getResourceHead,
  type NodeDraft,
  nodeCount,
  nodeId,
  normalizeSemanticKey,
  normalizeSemanticType,
} from '../../src/core/graph/index.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  return result.value;
}

function empty(config?: Parameters<typeof createGraph>[0]): GraphState {
  return value(createGraph(config));
}

function append(graph: GraphState, drafts: NodeDraft[], at = T0): AppendResult {
  return value(appendNodes(graph, drafts, at));
}

/** root goal → a, b (two heads, both advancing from root with explicit parents). */
function twoHeads() {
  const g0 = empty();
  const {
    graph: g1,
    nodes: [root],
  } = append(g0, [{ kind: 'goal', payload: 'task' }]);
  const r = root!;
  const { graph, nodes } = append(g1, [
    { kind: 'inference', payload: 'a', parents: [r.id], advance: false },
    { kind: 'inference', payload: 'b', parents: [r.id] },
  ]);
  return { graph, root: r, a: nodes[0]!, b: nodes[1]! };
}

describe('appendNodes: append rules', () => {
  it('parents default to the whole frontier, sorted', () => {
    const base = empty();
    const { graph: g1, nodes: roots } = append(base, [
      { kind: 'goal', payload: 'x', parents: [] },
      { kind: 'goal', payload: 'y', parents: [] },
      { kind: 'goal', payload: 'z', parents: [] },
    ]);
    expect(getFrontier(g1)).toEqual(roots.map((n) => n.id));
    const { nodes } = append(g1, [{ kind: 'answer', payload: 'done' }]);
    const expected = roots.map((n) => n.id).sort();
    expect(nodes[0]!.parents).toEqual(expected);
    expect(nodes[0]!.id).toBe(nodeId({ kind: 'answer', parents: expected, payload: 'done' }));
  });

  it('fails with UNKNOWN_PARENT naming the unknown parent', () => {
    const graph = empty();
    const result = appendNodes(graph, [{ kind: 'goal', payload: 1, parents: ['cw_missing'] }], T0);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('UNKNOWN_PARENT');
    expect(result.error).toMatchObject({ nodeId: 'cw_missing' });
    expect(result.error.message).toContain('cw_missing');
  });

  it('adds the previous head of a resourceKey as a parent', () => {
    const {
      graph: g1,
      nodes: [v1],
    } = append(empty(), [
      { kind: 'resource', payload: { v: 1 }, resourceKey: 'file:a.ts', parents: [] },
    ]);
    const {
      graph: g2,
      nodes: [other],
    } = append(g1, [{ kind: 'goal', payload: 'g', parents: [] }]);
    const {
      graph: g3,
      nodes: [v2],
    } = append(g2, [
      { kind: 'resource', payload: { v: 2 }, resourceKey: 'file:a.ts', parents: [other!.id] },
    ]);
    expect(v2!.parents).toEqual([v1!.id, other!.id].sort());
    expect(getResourceHead(g3, 'file:a.ts')?.id).toBe(v2!.id);
  });

  it('de-duplicates and sorts parents before hashing', () => {
    const { graph, a, b, root } = twoHeads();
    const messy = [b.id, a.id, b.id, root.id];
    const { nodes } = append(graph, [{ kind: 'answer', payload: 'ok', parents: messy }]);
    const sorted = [...new Set(messy)].sort();
    expect(nodes[0]!.parents).toEqual(sorted);
    expect(nodes[0]!.id).toBe(nodeId({ kind: 'answer', parents: sorted, payload: 'ok' }));
    const again = append(graph, [
      { kind: 'answer', payload: 'ok', parents: [...sorted].reverse() },
    ]);
    expect(again.nodes[0]!.id).toBe(nodes[0]!.id);
  });

  it('identical content creates nothing and returns the existing node', () => {
    const {
      graph: g1,
      nodes: [first],
    } = append(empty(), [{ kind: 'goal', payload: 'g' }], T0);
    const {
      graph: g2,
      nodes: [child],
    } = append(g1, [{ kind: 'inference', payload: 'i' }], T0);
    const before = JSON.stringify(exportAgentState(g2));
    const repeat = append(g2, [{ kind: 'goal', payload: 'g', parents: [] }], T1);
    expect(repeat.created).toEqual([false]);
    expect(repeat.nodes[0]).toBe(first);
    expect(repeat.nodes[0]!.createdAt).toBe(T0);
    expect(repeat.graph).toBe(g2);
    expect(JSON.stringify(exportAgentState(repeat.graph))).toBe(before);
    // Within one batch too: the second identical draft returns the node the first created.
    const batch = append(g2, [
      { kind: 'answer', payload: 'x', parents: [child!.id], advance: false },
      { kind: 'answer', payload: 'x', parents: [child!.id] },
    ]);
    expect(batch.created).toEqual([true, false]);
    expect(batch.nodes[1]).toBe(batch.nodes[0]);
    expect(nodeCount(batch.graph)).toBe(3);
    expect(getFrontier(batch.graph)).toEqual([child!.id]);
  });

  it('advance (default) removes the parents and the previous resource head and adds the node', () => {
    const { graph, a, b, root } = twoHeads();
    expect(getFrontier(graph)).toEqual([b.id]);
    const {
      graph: g1,
      nodes: [res1],
    } = append(graph, [{ kind: 'resource', payload: 1, resourceKey: 'r', parents: [a.id] }]);
    expect(getFrontier(g1)).toEqual([b.id, res1!.id]);
    const {
      graph: g2,
      nodes: [res2],
    } = append(g1, [{ kind: 'resource', payload: 2, resourceKey: 'r', parents: [b.id] }]);
    expect(res2!.parents).toEqual([b.id, res1!.id].sort());
    expect(getFrontier(g2)).toEqual([res2!.id]);
    expect(getNode(g2, root.id)).toBeDefined();
  });

  it('advance: false leaves the frontier unchanged', () => {
    const { graph, b } = twoHeads();
    const { graph: g1, nodes } = append(graph, [
      { kind: 'verification', payload: 'v', parents: [b.id], advance: false },
    ]);
    expect(getFrontier(g1)).toEqual([b.id]);
    expect(getFrontier(g1)).not.toContain(nodes[0]!.id);
  });

  it('semantic nodes never enter the frontier and do not change it', () => {
    const { graph, b } = twoHeads();
    const draft = value(createSemanticDraft(graph, { type: 'memory', key: 'k', content: 'v1' }));
    const { graph: g1, nodes } = append(graph, [{ ...draft, advance: true }]);
    expect(nodes[0]!.resourceKey).toBe('semantic:memory:k');
    expect(nodes[0]!.parents).toEqual([b.id]);
    expect(getFrontier(g1)).toEqual([b.id]);
    const { graph: g2 } = append(g1, [
      { kind: 'semantic', payload: { type: 'memory', key: 'k', content: 'v2' } },
    ]);
    expect(getFrontier(g2)).toEqual([b.id]);
  });

  it('sequences are 1-based and contiguous across calls and batches', () => {
    let graph = empty();
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = append(graph, [
        { kind: 'inference', payload: i },
        { kind: 'tool_call', payload: i },
      ]);
      seen.push(...r.nodes.map((n) => n.sequence));
      graph = r.graph;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(exportAgentState(graph).nodes.map((n) => n.sequence)).toEqual(seen);
  });

  it('applies drafts sequentially: a later default parent is the frontier after earlier drafts', () => {
    const { graph, nodes } = append(empty(), [
      { kind: 'goal', payload: 'g' },
      { kind: 'inference', payload: 'i' },
      { kind: 'answer', payload: 'a' },
    ]);
    expect(nodes[1]!.parents).toEqual([nodes[0]!.id]);
    expect(nodes[2]!.parents).toEqual([nodes[1]!.id]);
    expect(getFrontier(graph)).toEqual([nodes[2]!.id]);
  });

  it('is all or nothing: a failing draft leaves no trace', () => {
    const { graph } = twoHeads();
    const before = JSON.stringify(exportAgentState(graph));
    const failed = appendNodes(
      graph,
      [
        { kind: 'answer', payload: 'first' },
        { kind: 'answer', payload: 'second', parents: ['cw_nope'] },
      ],
      T0,
    );
    expect(failed.ok).toBe(false);
    expect(JSON.stringify(exportAgentState(graph))).toBe(before);
    // The shared store was not polluted: the same first draft still lands as sequence 4.
    const ok = append(graph, [{ kind: 'answer', payload: 'first' }]);
    expect(ok.nodes[0]!.sequence).toBe(4);
    expect(nodeCount(ok.graph)).toBe(4);
  });

  it('returns the same graph for an empty batch', () => {
    const graph = empty();
    const r = append(graph, []);
    expect(r.graph).toBe(graph);
    expect(r.nodes).toEqual([]);
  });

  it('accepts exactly the createdAt values Date.parse accepts', () => {
    const graph = empty();
    const field = (max: number, width = 2) =>
      fc.integer({ min: 0, max }).map((n) => String(n).padStart(width, '0'));
    // ISO-shaped strings around and beyond every range (month 13, day 31, hour 24, second 60 …).
    const iso = fc
      .tuple(field(9999, 4), field(13), field(32), field(25), field(61), field(61), field(999, 3))
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    const other = fc.oneof(
      fc.string(),
      iso.map((t) => t.replace('Z', '+02:00')),
      iso.map((t) => t.slice(0, 19)),
      iso.map((t) => t.replace('T', ' ')),
      iso.map((t) => `${t} `),
    );
    fc.assert(
      fc.property(fc.oneof(iso, other), (at) => {
        const accepted = appendNodes(graph, [{ kind: 'goal', payload: 1 }], at).ok;
        expect(accepted).toBe(!Number.isNaN(Date.parse(at)));
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects bad drafts and createdAt with VALIDATION_FAILED and a path', () => {
    const graph = empty();
    const bad = (drafts: unknown[], at = T0) => {
      const r = appendNodes(graph, drafts as NodeDraft[], at);
      if (r.ok || r.error.code !== 'VALIDATION_FAILED') throw new Error('expected failure');
      return r.error.issues.map((i) => i.path);
    };
    expect(bad([{ kind: 'goal', payload: 1 }], 'not a date')).toEqual(['createdAt']);
    expect(bad([{ kind: 'thought', payload: 1 }])).toEqual(['$[0].kind']);
    expect(bad([{ kind: 'goal' }])).toEqual(['$[0].payload']);
    expect(
      bad([
        { kind: 'goal', payload: 'ok' },
        { kind: 'goal', payload: { x: [1, Number.NaN] } },
      ]),
    ).toEqual(['$[1].payload.x[1]']);
    expect(bad([{ kind: 'goal', payload: 1, resourceKey: '' }])).toEqual(['$[0].resourceKey']);
    expect(bad([{ kind: 'goal', payload: 1, parents: [3] }])).toEqual(['$[0].parents']);
    expect(bad([{ kind: 'goal', payload: 1, advance: 'yes' }])).toEqual(['$[0].advance']);
    expect(bad([{ kind: 'resource', payload: 1, resourceKey: 'semantic:memory:x' }])).toEqual([
      '$[0].resourceKey',
    ]);
  });

  it('copies and freezes payloads so callers cannot change stored nodes', () => {
    const payload = { list: [1, 2] };
    const { graph, nodes } = append(empty(), [{ kind: 'goal', payload }]);
    payload.list.push(3);
    expect(getNode(graph, nodes[0]!.id)?.payload).toEqual({ list: [1, 2] });
    expect(Object.isFrozen(nodes[0])).toBe(true);
    expect(Object.isFrozen(nodes[0]!.parents)).toBe(true);
    expect(Object.isFrozen((nodes[0]!.payload as { list: number[] }).list)).toBe(true);
  });
});

describe('semantic nodes', () => {
  it('normalises type and key like the StateWeave SDK', () => {
    expect(normalizeSemanticType('  User Preference!! ')).toBe('user-preference');
    expect(normalizeSemanticType('9lives')).toBeUndefined();
    expect(normalizeSemanticType('---')).toBeUndefined();
    expect(normalizeSemanticType('a'.repeat(48))).toBe('a'.repeat(48));
    expect(normalizeSemanticType('a'.repeat(49))).toBeUndefined();
    expect(normalizeSemanticKey('  Favourite Colour ')).toBe('favourite-colour');
    expect(normalizeSemanticKey('src/Config.ts:v2')).toBe('src/config.ts:v2');
    expect(normalizeSemanticKey(' !! ')).toBeUndefined();
    expect(normalizeSemanticKey('x'.repeat(500))).toHaveLength(120);
  });

  it('normalises the payload and derives the resource key', () => {
    const graph = empty();
    const { nodes } = append(graph, [
      {
        kind: 'semantic',
        payload: { type: ' Memory ', key: 'Home City', content: { city: 'Oslo' } },
      },
    ]);
    expect(nodes[0]!.payload).toEqual({
      type: 'memory',
      key: 'home-city',
      content: { city: 'Oslo' },
    });
    expect(nodes[0]!.resourceKey).toBe('semantic:memory:home-city');
  });

  it('verifies an explicit resource key', () => {
    const graph = empty();
    const payload = { type: 'memory', key: 'k', content: 1 };
    expect(
      appendNodes(graph, [{ kind: 'semantic', payload, resourceKey: 'semantic:memory:k' }], T0).ok,
    ).toBe(true);
    const wrong = appendNodes(
      graph,
      [{ kind: 'semantic', payload, resourceKey: 'semantic:memory:j' }],
      T0,
    );
    expect(!wrong.ok && wrong.error.code).toBe('VALIDATION_FAILED');
  });

  it('rejects malformed semantic payloads with their paths', () => {
    const graph = empty();
    const paths = (payload: unknown) => {
      const r = appendNodes(graph, [{ kind: 'semantic', payload: payload as never }], T0);
      if (r.ok || r.error.code !== 'VALIDATION_FAILED')
        throw new Error('expected VALIDATION_FAILED');
      return r.error.issues.map((i) => i.path);
    };
    expect(paths('text')).toEqual(['$[0].payload']);
    expect(paths({ type: 'memory', key: 'k' })).toEqual(['$[0].payload.content']);
    expect(paths({ type: 7, key: '', content: 1, extra: true })).toEqual([
      '$[0].payload.extra',
      '$[0].payload.type',
      '$[0].payload.key',
    ]);
    expect(paths({ type: 'memory', key: 'k', content: 'x'.repeat(100_001) })).toEqual([
      '$[0].payload.content',
    ]);
  });

  it('refuses a type outside the vocabulary unless dynamic types are allowed', () => {
    const strict = empty({ nodeTypes: [{ name: 'decision', description: 'A decision.' }] });
    const payload = { type: 'Memory', key: 'k', content: 1 };
    const refused = appendNodes(strict, [{ kind: 'semantic', payload }], T0);
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.error).toMatchObject({ code: 'SEMANTIC_TYPE_NOT_ALLOWED', type: 'memory' });
    expect(createSemanticDraft(strict, payload).ok).toBe(false);
    const dynamic = empty({
      nodeTypes: [{ name: 'decision', description: 'A decision.' }],
      allowDynamicNodeTypes: true,
    });
    expect(appendNodes(dynamic, [{ kind: 'semantic', payload }], T0).ok).toBe(true);
  });

  it('successive writes of one type and key form versions; getMemory returns current heads', () => {
    let graph = empty();
    const write = (type: string, key: string, content: string) => {
      const draft = value(createSemanticDraft(graph, { type, key, content }));
      const r = append(graph, [draft]);
      graph = r.graph;
      return r.nodes[0]!;
    };
    const v1 = write('memory', 'city', 'Oslo');
    const pref = write('preference', 'tone', 'dry');
    const v2 = write('memory', 'City', 'Bergen');
    expect(v2.parents).toContain(v1.id);
    expect(getMemory(graph).map((n) => n.id)).toEqual([pref.id, v2.id]);
    expect(getMemory(graph, { type: 'MEMORY' }).map((n) => n.id)).toEqual([v2.id]);
    expect(getMemory(graph, { key: 'tone' }).map((n) => n.id)).toEqual([pref.id]);
    expect(getMemory(graph, { type: 'memory', key: 'tone' })).toEqual([]);
    expect(getMemory(graph, { type: '!!' })).toEqual([]);
  });
});

describe('createGraph: vocabulary', () => {
  const issues = (config: unknown) => {
    const r = createGraph(config as never);
    if (r.ok || r.error.code !== 'VALIDATION_FAILED') throw new Error('expected VALIDATION_FAILED');
    return r.error.issues;
  };

  it('defaults to memory, preference, wisdom, artifact and no dynamic types', () => {
    const graph = empty();
    expect(graph.config.nodeTypes.map((t) => t.name)).toEqual([
      'memory',
      'preference',
      'wisdom',
      'artifact',
    ]);
    expect(graph.config.allowDynamicNodeTypes).toBe(false);
    expect(DEFAULT_NODE_TYPES.every((t) => t.description.length > 0)).toBe(true);
  });

  it('normalises names and trims descriptions', () => {
    const graph = empty({
      nodeTypes: [{ name: ' Team Decision ', description: '  Why we chose.  ' }],
    });
    expect(graph.config.nodeTypes).toEqual([
      { name: 'team-decision', description: 'Why we chose.' },
    ]);
  });

  it('allows at most 32 types', () => {
    const types = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `t${i}`, description: 'd' }));
    expect(createGraph({ nodeTypes: types(32) }).ok).toBe(true);
    expect(issues({ nodeTypes: types(33) }).map((i) => i.path)).toEqual(['$.nodeTypes']);
  });

  it('reports invalid names, empty descriptions and duplicates with paths', () => {
    const found = issues({
      nodeTypes: [
        { name: 'memory', description: 'd' },
        { name: '42', description: 'd' },
        { name: 'MEMORY', description: 'd' },
        { name: 'ok', description: '   ' },
        'nope',
      ],
      allowDynamicNodeTypes: 'yes',
    });
    expect(found.map((i) => i.path)).toEqual([
      '$.allowDynamicNodeTypes',
      '$.nodeTypes[1].name',
      '$.nodeTypes[2].name',
      '$.nodeTypes[3].description',
      '$.nodeTypes[4]',
    ]);
    expect(found[2]!.message).toContain('duplicates $.nodeTypes[0]');
  });

  it('requires at least one type', () => {
    expect(issues({ nodeTypes: [] }).map((i) => i.path)).toEqual(['$.nodeTypes']);
  });
});
