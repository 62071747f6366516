import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IMPORT_RULE_CODES, type ImportRuleCode } from '../../src/core/errors.js';
import {
  type AgentState,
  appendNodes,
  type CausalNode,
  exportAgentState,
  type ImportLimits,
  importAgentState,
  NODE_KINDS,
  type NodeKind,
  nodeId,
  validateAgentState,
} from '../../src/core/graph/index.js';
import type { JsonValue } from '../../src/core/json.js';

type RawState = Record<string, unknown> & { nodes: Record<string, unknown>[]; frontier: unknown[] };

function makeNode(
  nodes: CausalNode[],
  kind: NodeKind,
  payload: JsonValue,
  parents: string[],
  createdAt: string,
  resourceKey?: string,
): CausalNode {
  const sorted = [...parents].sort();
  const id = nodeId({ kind, parents: sorted, payload, resourceKey });
  return {
    id,
    kind,
    parents: sorted,
    payload,
    createdAt,
    sequence: nodes.length + 1,
    ...(resourceKey === undefined ? {} : { resourceKey }),
  };
}

/**
 * A hand-written valid state: goal → inference → resource v1 → resource v2, answer head, and a
 * semantic memory of the inference (never a head).
 */
function sampleState(): AgentState {
  const nodes: CausalNode[] = [];
  const add = (kind: NodeKind, payload: JsonValue, parents: string[], resourceKey?: string) => {
    const node = makeNode(
      nodes,
      kind,
      payload,
      parents,
      `2026-01-01T00:00:0${nodes.length}.000Z`,
      resourceKey,
    );
    nodes.push(node);
    return node.id;
  };
  const goal = add('goal', 'write the config', []);
  const thought = add('inference', { plan: ['read', 'write'] }, [goal]);
  const v1 = add('resource', { bytes: 10 }, [thought], 'file:config.ts');
  const v2 = add('resource', { bytes: 12 }, [thought, v1], 'file:config.ts');
  const answer = add('answer', 'done', [v2]);
  add(
    'semantic',
    { type: 'memory', key: 'config-path', content: 'src/config.ts' },
    [thought],
    'semantic:memory:config-path',
  );
  return { version: 1, nodes, frontier: [answer] };
}

const raw = (state: AgentState): RawState => JSON.parse(JSON.stringify(state)) as RawState;

function failure(input: unknown, limits?: ImportLimits) {
  const result = validateAgentState(input, limits);
  if (result.ok) throw new Error('expected the state to be rejected');
  const imported = importAgentState(input, undefined, limits);
  if (imported.ok) throw new Error('import accepted what validation rejected');
  expect(imported.error).toEqual(result.error);
  return result.error;
}

describe('import rules, one by one', () => {
  /** Each case corrupts the sample in place and returns the node id the error must name. */
  const cases: [ImportRuleCode, (s: RawState) => unknown, ImportLimits?][] = [
    ['STATE_TOO_LARGE', () => undefined, { maxNodes: 4 }],
    [
      'STATE_VERSION_UNSUPPORTED',
      (s) => {
        s.version = 2;
      },
    ],
    [
      'STATE_SHAPE_INVALID',
      (s) => {
        s.frontier = 'head' as never;
      },
    ],
    [
      'NODE_SHAPE_INVALID',
      (s) => {
        delete s.nodes[2]!.payload;
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_KIND_INVALID',
      (s) => {
        s.nodes[2]!.kind = 'thought';
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_CREATED_AT_INVALID',
      (s) => {
        s.nodes[2]!.createdAt = 'last tuesday';
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_SEQUENCE_INVALID',
      (s) => {
        s.nodes[2]!.sequence = 4;
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_RESOURCE_KEY_INVALID',
      (s) => {
        s.nodes[2]!.resourceKey = 7;
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_SEMANTIC_INVALID',
      (s) => {
        s.nodes[5]!.resourceKey = 'semantic:memory:admin';
        return s.nodes[5]!.id;
      },
    ],
    [
      'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
      (s) => {
        s.nodes[5]!.payload = { type: 'secret', key: 'config-path', content: 'src/config.ts' };
        s.nodes[5]!.resourceKey = 'semantic:secret:config-path';
        return s.nodes[5]!.id;
      },
    ],
    [
      'NODE_PARENTS_INVALID',
      (s) => {
        (s.nodes[3]!.parents as string[]).reverse();
        return s.nodes[3]!.id;
      },
    ],
    [
      'NODE_ID_DUPLICATE',
      (s) => {
        s.nodes[3]!.id = s.nodes[2]!.id;
        return s.nodes[2]!.id;
      },
    ],
    [
      'NODE_PARENT_NOT_EARLIER',
      (s) => {
        s.nodes[1]!.parents = [s.nodes[2]!.id];
        return s.nodes[1]!.id;
      },
    ],
    [
      'NODE_VERSION_PARENT_MISSING',
      (s) => {
        s.nodes[3]!.parents = [s.nodes[1]!.id as string];
        return s.nodes[3]!.id;
      },
    ],
    [
      'NODE_ID_MISMATCH',
      (s) => {
        s.nodes[2]!.payload = { bytes: 11 };
        return s.nodes[2]!.id;
      },
    ],
    [
      'FRONTIER_INVALID',
      (s) => {
        s.frontier.push(s.frontier[0]);
        return s.frontier[0];
      },
    ],
  ];

  it('covers every import rule code', () => {
    expect(cases.map(([code]) => code)).toEqual([...IMPORT_RULE_CODES]);
  });

  it.each(cases)('%s', (code, corrupt, limits) => {
    const state = raw(sampleState());
    const nodeId = corrupt(state);
    const error = failure(state, limits);
    expect(error.code).toBe(code);
    expect(error.nodeId).toBe(nodeId);
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('names the offending node (id and index) where there is one', () => {
    const state = raw(sampleState());
    const target = state.nodes[2]!.id as string;
    state.nodes[2]!.createdAt = 'soon';
    const error = failure(state);
    expect(error.nodeId).toBe(target);
    expect(error.message).toContain('nodes[2]');
    expect(error.message).toContain(target);
  });

  it('the first failing rule wins, even when a later node breaks an earlier rule', () => {
    const state = raw(sampleState());
    state.nodes[1]!.sequence = 9; // NODE_SEQUENCE_INVALID at node 1
    state.nodes[4]!.kind = 'summary'; // NODE_KIND_INVALID at node 4 — an earlier rule
    const error = failure(state);
    expect(error.code).toBe('NODE_KIND_INVALID');
    expect(error.nodeId).toBe(state.nodes[4]!.id);
  });

  it('within one rule, the first node in sequence order wins', () => {
    const state = raw(sampleState());
    state.nodes[3]!.createdAt = 'x';
    state.nodes[1]!.createdAt = 'y';
    expect(failure(state).nodeId).toBe(state.nodes[1]!.id);
  });

  it('rejects non-objects, extra fields and non-JSON payloads instead of repairing them', () => {
    expect(failure(null).code).toBe('STATE_SHAPE_INVALID');
    expect(failure([]).code).toBe('STATE_SHAPE_INVALID');
    expect(failure({ ...raw(sampleState()), extra: 1 }).code).toBe('STATE_SHAPE_INVALID');
    const extraField = raw(sampleState());
    extraField.nodes[0]!.note = 'hi';
    expect(failure(extraField).code).toBe('NODE_SHAPE_INVALID');
    const nonJson = raw(sampleState());
    nonJson.nodes[0]!.payload = { when: new Date(0) };
    expect(failure(nonJson).message).toContain('payload.when');
    const cyclic = raw(sampleState());
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    cyclic.nodes[0]!.payload = loop;
    expect(failure(cyclic).code).toBe('NODE_SHAPE_INVALID');
  });

  it('enforces payload and total size limits before other work', () => {
    const state = raw(sampleState());
    state.nodes[1]!.payload = 'x'.repeat(2_000_000);
    state.version = 3; // would fail later; size is checked first
    const error = failure(state);
    expect(error.code).toBe('STATE_TOO_LARGE');
    expect(error.nodeId).toBe(state.nodes[1]!.id);
    expect(failure(raw(sampleState()), { maxBytes: 200 }).code).toBe('STATE_TOO_LARGE');
    expect(failure(raw(sampleState()), { maxPayloadBytes: 10 }).code).toBe('STATE_TOO_LARGE');
    expect(validateAgentState(raw(sampleState()), { maxNodes: 6 }).ok).toBe(true);
  });

  it('checks semantic nodes against the vocabulary it imports with, and as given (never normalised)', () => {
    const state = raw(sampleState());
    const custom = { nodeTypes: [{ name: 'decision', description: 'A decision.' }] };
    const outside = importAgentState(state, custom);
    expect(!outside.ok && outside.error).toMatchObject({
      code: 'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
      nodeId: state.nodes[5]!.id,
    });
    expect(!outside.ok && outside.error.message).toContain('payload.type "memory"');
    expect(importAgentState(state, { ...custom, allowDynamicNodeTypes: true }).ok).toBe(true);
    const upper = raw(sampleState());
    upper.nodes[5]!.payload = { type: 'Memory', key: 'config-path', content: 'src/config.ts' };
    const refused = failure(upper);
    expect(refused.code).toBe('NODE_SEMANTIC_INVALID');
    expect(refused.message).toContain(
      'payload.type "Memory" is not a semantic type in normal form',
    );
  });

  it('refuses a semantic resource key on another kind, an empty key and a semantic head', () => {
    const reserved = raw(sampleState());
    reserved.nodes[2]!.resourceKey = 'semantic:memory:config-path';
    expect(failure(reserved)).toMatchObject({
      code: 'NODE_RESOURCE_KEY_INVALID',
      nodeId: reserved.nodes[2]!.id,
    });
    const empty = raw(sampleState());
    empty.nodes[2]!.resourceKey = '';
    expect(failure(empty).code).toBe('NODE_RESOURCE_KEY_INVALID');
    const head = raw(sampleState());
    head.frontier.push(head.nodes[5]!.id);
    expect(failure(head)).toMatchObject({ code: 'FRONTIER_INVALID', nodeId: head.nodes[5]!.id });
  });

  it('fails with VALIDATION_FAILED on a bad vocabulary', () => {
    const result = importAgentState(raw(sampleState()), { nodeTypes: [] });
    expect(!result.ok && result.error.code).toBe('VALIDATION_FAILED');
  });
});

describe('export', () => {
  it('round-trips the sample byte for byte', () => {
    const text = JSON.stringify(sampleState());
    const graph = importAgentState(JSON.parse(text));
    expect(graph.ok && JSON.stringify(exportAgentState(graph.value))).toBe(text);
  });

  it('round-trips another key order semantically', () => {
    const state = sampleState();
    const shuffled = {
      frontier: state.frontier,
      nodes: state.nodes.map((n) => {
        const { id, kind, parents, payload, createdAt, sequence, resourceKey } = n;
        return {
          sequence,
          payload,
          kind,
          ...(resourceKey ? { resourceKey } : {}),
          parents,
          createdAt,
          id,
        };
      }),
      version: 1,
    };
    const graph = importAgentState(JSON.parse(JSON.stringify(shuffled)));
    if (!graph.ok) throw new Error(graph.error.message);
    expect(exportAgentState(graph.value)).toEqual(state);
    expect(JSON.stringify(exportAgentState(graph.value))).toBe(JSON.stringify(state));
  });

  it('keeps an own "__proto__" payload key as data', () => {
    const nodes: CausalNode[] = [];
    const payload = JSON.parse('{"__proto__":{"polluted":true},"b":1}') as JsonValue;
    nodes.push(makeNode(nodes, 'tool_result', payload, [], '2026-01-01T00:00:00Z'));
    const text = JSON.stringify({ version: 1, nodes, frontier: [] });
    const graph = importAgentState(JSON.parse(text));
    if (!graph.ok) throw new Error(graph.error.message);
    expect(JSON.stringify(exportAgentState(graph.value))).toBe(text);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not let later changes to the raw input leak into the graph', () => {
    const input = raw(sampleState());
    const graph = importAgentState(input);
    if (!graph.ok) throw new Error(graph.error.message);
    (input.nodes[1]!.payload as { plan: string[] }).plan.push('oops');
    input.frontier.length = 0;
    expect(exportAgentState(graph.value)).toEqual(sampleState());
  });

  it('appends after an import keep the frontier order and add new heads at the end', () => {
    const state = sampleState();
    const extraRoot = makeNode(state.nodes, 'system', 'sys', [], '2026-01-02T00:00:00Z');
    state.nodes.push(extraRoot);
    state.frontier = [extraRoot.id, ...state.frontier];
    const graph = importAgentState(raw(state));
    if (!graph.ok) throw new Error(graph.error.message);
    const next = appendNodes(
      graph.value,
      [{ kind: 'tool_call', payload: 1, parents: [extraRoot.id] }],
      '2026-01-03T00:00:00Z',
    );
    if (!next.ok) throw new Error(next.error.message);
    expect(exportAgentState(next.value.graph).frontier).toEqual([
      state.frontier[1],
      next.value.nodes[0]!.id,
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Generated states

const ISO = fc
  .date({
    min: new Date('1990-01-01T00:00:00Z'),
    max: new Date('2100-01-01T00:00:00Z'),
    noInvalidDate: true,
  })
  .map((d) => d.toISOString());
const createdAtArb = fc.oneof(ISO, fc.constantFrom('2026-01-01', '2026-01-01T12:00:00+02:00'));

const specArb = fc.record({
  kind: fc.constantFrom(...NODE_KINDS),
  payload: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JsonValue>,
  parentMask: fc.array(fc.boolean(), { maxLength: 12 }),
  resourceKey: fc.option(fc.constantFrom('file:a.ts', 'file:b.ts', 'r'), { nil: undefined }),
  semantic: fc.record({
    type: fc.constantFrom('memory', 'preference'),
    key: fc.constantFrom('k', 'notes/2026.md'),
  }),
  createdAt: createdAtArb,
});

/**
 * A valid AgentState built directly (not through appendNodes): an arbitrary DAG and frontier
 * within the node rules — a semantic node's payload and key agree, a new version of a resource
 * key has the previous one among its parents, and no semantic node is a head.
 */
const validStateArb = (minNodes: number) =>
  fc
    .record({
      specs: fc.array(specArb, { minLength: minNodes, maxLength: 12 }),
      frontierMask: fc.array(fc.boolean(), { maxLength: 12 }),
      frontierOrder: fc.array(fc.nat(), { maxLength: 12 }),
    })
    .map(({ specs, frontierMask, frontierOrder }) => {
      const nodes: CausalNode[] = [];
      const ids = new Set<string>();
      const versions = new Map<string, string>();
      for (const spec of specs) {
        const { type, key } = spec.semantic;
        const semantic = spec.kind === 'semantic';
        const payload = semantic ? { type, key, content: spec.payload } : spec.payload;
        const resourceKey = semantic ? `semantic:${type}:${key}` : spec.resourceKey;
        const parents = nodes.filter((_, j) => spec.parentMask[j]).map((n) => n.id);
        const previous = resourceKey === undefined ? undefined : versions.get(resourceKey);
        if (previous !== undefined && !parents.includes(previous)) parents.push(previous);
        const node = makeNode(nodes, spec.kind, payload, parents, spec.createdAt, resourceKey);
        if (ids.has(node.id)) continue;
        ids.add(node.id);
        nodes.push(node);
        if (resourceKey !== undefined) versions.set(resourceKey, node.id);
      }
      const heads = nodes
        .filter((n, j) => frontierMask[j] && n.kind !== 'semantic')
        .map((n) => n.id);
      const frontier = heads
        .map((id, j) => ({ id, rank: frontierOrder[j] ?? 0 }))
        .sort((a, b) => a.rank - b.rank)
        .map((h) => h.id);
      return { version: 1, nodes, frontier } as AgentState;
    })
    .filter((state) => state.nodes.length >= minNodes);

describe('generated states', () => {
  it('1,000 valid states round-trip byte-identically through import and export', () => {
    fc.assert(
      fc.property(validStateArb(0), (state) => {
        const text = JSON.stringify(state);
        expect(validateAgentState(JSON.parse(text))).toEqual({ ok: true });
        const graph = importAgentState(JSON.parse(text));
        if (!graph.ok) throw new Error(graph.error.message);
        expect(JSON.stringify(exportAgentState(graph.value))).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('1,000 single-point corruptions are all rejected with the expected code and node', () => {
    fc.assert(
      fc.property(
        validStateArb(2),
        fc.constantFrom(...IMPORT_RULE_CODES),
        fc.nat(),
        fc.nat(),
        (state, code, pick, variant) => {
          const mutation = corrupt(raw(state), code, pick, variant);
          const result = validateAgentState(mutation.input, mutation.limits);
          expect(result.ok).toBe(false);
          if (result.ok) return;
          expect(result.error.code).toBe(code);
          expect(result.error.nodeId).toBe(mutation.nodeId);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('1,000 double corruptions: the fault of the earlier rule always wins', () => {
    const codeIndex = fc.integer({ min: 0, max: IMPORT_RULE_CODES.length - 1 });
    fc.assert(
      fc.property(
        validStateArb(2),
        fc.uniqueArray(codeIndex, { minLength: 2, maxLength: 2 }),
        fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat()),
        (state, pair, [pick1, variant1, pick2, variant2]) => {
          const [first, second] = [...pair].sort((a, b) => a - b) as [number, number];
          const earlier = IMPORT_RULE_CODES[first]!;
          const later = IMPORT_RULE_CODES[second]!;
          // Replacing `nodes` wholesale leaves no node array to measure.
          fc.pre(!(earlier === 'STATE_TOO_LARGE' && later === 'STATE_SHAPE_INVALID'));
          // Apply the later rule's fault first so the earlier one is never overwritten.
          const one = corrupt(raw(state), later, pick1, variant1);
          const two = corrupt(one.input as RawState, earlier, pick2, variant2);
          const result = validateAgentState(two.input, { ...one.limits, ...two.limits });
          expect(result.ok ? 'accepted' : result.error.code).toBe(earlier);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

interface Mutation {
  input: unknown;
  limits?: ImportLimits;
  /** The node id the error must name (undefined: none). */
  nodeId?: string | undefined;
}

const MISSING_ID = `cw_${'0'.repeat(24)}`;

/** One fault of the given rule, and nothing that an earlier rule would catch. */
function corrupt(s: RawState, code: ImportRuleCode, pick: number, variant: number): Mutation {
  // After a STATE_SHAPE_INVALID fault `nodes` may not be an array; only top-level rules follow.
  const n = Array.isArray(s.nodes) ? s.nodes.length : 0;
  const i = n > 0 ? pick % n : 0;
  const found: unknown = n > 0 ? s.nodes[i] : undefined;
  const isNode = typeof found === 'object' && found !== null;
  const node = (isNode ? found : {}) as Record<string, unknown>;
  const id = node.id as string;
  const v = (count: number) => variant % count;
  switch (code) {
    case 'STATE_TOO_LARGE': {
      const choice = v(3);
      if (choice === 0 || !isNode) return { input: s, limits: { maxNodes: n - 1 } };
      if (choice === 1) return { input: s, limits: { maxBytes: 50 } };
      node.payload = 'x'.repeat(1_100_000); // over the default 1 MiB payload limit
      return { input: s, nodeId: id };
    }
    case 'STATE_VERSION_UNSUPPORTED': {
      const versions = [2, 0, '1', null, 1.5];
      if (v(6) === 5) delete s.version;
      else s.version = versions[v(6)];
      return { input: s };
    }
    case 'STATE_SHAPE_INVALID': {
      const choice = v(4);
      if (choice === 0) return { input: { ...s, nodes: {} } };
      if (choice === 1) return { input: { ...s, frontier: s.frontier.join(',') } };
      if (choice === 2) return { input: { version: 1, nodes: s.nodes } };
      return { input: { ...s, metadata: {} } };
    }
    case 'NODE_SHAPE_INVALID': {
      const choice = v(9);
      if (choice === 0) s.nodes[i] = null as never;
      else if (choice === 1) delete node.id;
      else if (choice === 2) node.id = 42;
      else if (choice === 3) node.parents = 'none';
      else if (choice === 4) delete node.payload;
      else if (choice === 5) node.payload = { fn: () => 1 };
      else if (choice === 6) node.createdAt = Date.parse('2026-01-01');
      else if (choice === 7) node.sequence = String(node.sequence);
      else node.runId = 'run-1';
      return { input: s, nodeId: choice <= 2 ? undefined : id };
    }
    case 'NODE_KIND_INVALID': {
      const kinds = ['thought', 'Goal', 3, null];
      if (v(5) === 4) delete node.kind;
      else node.kind = kinds[v(5)];
      return { input: s, nodeId: id };
    }
    case 'NODE_CREATED_AT_INVALID':
      node.createdAt = ['', 'not a date', 'yesterday at noon'][v(3)];
      return { input: s, nodeId: id };
    case 'NODE_SEQUENCE_INVALID':
      node.sequence = [i + 2, i, 0, i + 1.5, -(i + 1)][v(5)];
      return { input: s, nodeId: id };
    case 'NODE_RESOURCE_KEY_INVALID': {
      const key = [5, null, ['k'], {}, true, '', 'semantic:memory:k'][v(7)];
      // A semantic key is only wrong on another kind.
      node.resourceKey = key === 'semantic:memory:k' && node.kind === 'semantic' ? '' : key;
      return { input: s, nodeId: id };
    }
    case 'NODE_SEMANTIC_INVALID': {
      const choice = v(4);
      const payload = node.payload as Record<string, unknown>;
      if (node.kind !== 'semantic' || choice === 0) {
        node.kind = 'semantic';
        node.payload = { type: 'memory', key: 'k', content: 1, note: 'not a semantic field' };
      } else if (choice === 1) {
        payload.key = 'Not Normal';
      } else if (choice === 2) {
        node.resourceKey = `${node.resourceKey as string}-moved`;
      } else {
        delete node.resourceKey;
      }
      return { input: s, nodeId: id };
    }
    case 'NODE_SEMANTIC_TYPE_NOT_ALLOWED':
      node.kind = 'semantic';
      node.payload = { type: 'secret', key: 'k', content: 1 };
      node.resourceKey = 'semantic:secret:k';
      return { input: s, nodeId: id };
    case 'NODE_PARENTS_INVALID': {
      const parents = node.parents as unknown[];
      const choice = v(3);
      if (choice === 1 && parents.length >= 1) parents.push(parents[0]);
      else if (choice === 2 && parents.length >= 2) parents.reverse();
      else parents.splice(pick % (parents.length + 1), 0, 7);
      return { input: s, nodeId: id };
    }
    case 'NODE_ID_DUPLICATE': {
      const j = 1 + (pick % (n - 1));
      const k = variant % j;
      const duplicate = s.nodes[k]!.id as string;
      s.nodes[j]!.id = duplicate;
      return { input: s, nodeId: duplicate };
    }
    case 'NODE_PARENT_NOT_EARLIER': {
      const later = s.nodes[i + 1 + (variant % Math.max(1, n - i - 1))];
      const candidates = [MISSING_ID, id, ...(later ? [later.id as string] : [])];
      const extra = candidates[v(candidates.length)] as string;
      node.parents = [...(node.parents as string[]), extra].sort();
      return { input: s, nodeId: id };
    }
    case 'NODE_VERSION_PARENT_MISSING': {
      // Two versions of a fresh key, the second not descending from the first.
      const version = (payload: string, sequence: number): CausalNode => ({
        id: nodeId({ kind: 'resource', parents: [], payload, resourceKey: 'fresh' }),
        kind: 'resource',
        parents: [],
        payload,
        createdAt: '2026-01-01T00:00:00Z',
        sequence,
        resourceKey: 'fresh',
      });
      const second = version('v2', n + 2);
      s.nodes.push(version('v1', n + 1) as never, second as never);
      return { input: s, nodeId: second.id };
    }
    case 'NODE_ID_MISMATCH': {
      // Only changes that keep the node rules: a semantic node keeps its kind and keys.
      const choice = v(3);
      const semantic = node.kind === 'semantic';
      if (choice === 1 && !semantic) {
        const others: readonly NodeKind[] = NODE_KINDS.filter((k) => k !== 'semantic');
        node.kind = others[(others.indexOf(node.kind as NodeKind) + 1) % others.length];
      } else if (choice === 2 && !semantic && node.resourceKey === undefined) {
        node.resourceKey = 'injected';
      } else if (semantic) {
        const payload = node.payload as { content: JsonValue };
        payload.content = { corrupted: payload.content };
      } else {
        node.payload = { corrupted: node.payload as JsonValue };
      }
      return { input: s, nodeId: id };
    }
    case 'FRONTIER_INVALID': {
      const choice = v(4);
      const memory = s.nodes.find((m) => m.kind === 'semantic')?.id as string | undefined;
      if (choice === 3 && memory !== undefined) {
        s.frontier.push(memory);
        return { input: s, nodeId: memory };
      }
      if (choice === 0 || choice === 3) {
        s.frontier.splice(pick % (s.frontier.length + 1), 0, MISSING_ID);
        return { input: s, nodeId: MISSING_ID };
      }
      if (choice === 1) {
        s.frontier.push(42);
        return { input: s };
      }
      const dup = (s.frontier[0] as string | undefined) ?? id;
      if (s.frontier.length === 0) s.frontier.push(dup);
      s.frontier.push(dup);
      return { input: s, nodeId: dup };
    }
  }
}
