import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AgentState,
  appendNodes,
  type CausalNode,
  createGraph,
  exportAgentState,
  type GraphState,
  getChildren,
  getFrontier,
  getMemory,
  getNode,
  getNodeBySequence,
  getResourceHead,
  getResourceHeads,
  getResourceHistory,
  getSupersededBy,
  getSupersedes,
  importAgentState,
  isCurrent,
  isFrontier,
  NODE_KINDS,
  type NodeDraft,
  type NodeKind,
  nodeCount,
  nodeId,
  validateAgentState,
  walkAncestors,
  walkDescendants,
} from '../../src/core/graph/index.js';

const T = '2026-03-01T00:00:00.000Z';

// ---------------------------------------------------------------------------------------------
// A deliberately naive reference: append and every reader over a plain AgentState, by scanning.

function refAppend(state: AgentState, drafts: NodeDraft[]): AgentState | 'error' {
  const nodes = [...state.nodes];
  let frontier = [...state.frontier];
  for (const draft of drafts) {
    const requested = draft.parents ?? frontier;
    if (requested.some((p) => !nodes.some((n) => n.id === p))) return 'error';
    const previous = draft.resourceKey
      ? nodes.filter((n) => n.resourceKey === draft.resourceKey).at(-1)
      : undefined;
    const parents = [...new Set([...requested, ...(previous ? [previous.id] : [])])].sort();
    const id = nodeId({
      kind: draft.kind,
      parents,
      payload: draft.payload,
      resourceKey: draft.resourceKey,
    });
    if (nodes.some((n) => n.id === id)) continue;
    nodes.push({
      id,
      kind: draft.kind,
      parents,
      payload: draft.payload,
      createdAt: T,
      sequence: nodes.length + 1,
      ...(draft.resourceKey === undefined ? {} : { resourceKey: draft.resourceKey }),
    });
    if (draft.advance !== false && !draft.resourceKey?.startsWith('semantic:')) {
      frontier = [...frontier.filter((f) => !parents.includes(f)), id];
    }
  }
  return { version: 1, nodes, frontier };
}

function refWalk(
  state: AgentState,
  start: string,
  up: boolean,
  depth: number,
  limit: number,
  kinds?: NodeKind[],
): string[] {
  const byId = new Map(state.nodes.map((n) => [n.id, n]));
  const next = (id: string) =>
    up
      ? (byId.get(id)?.parents ?? [])
      : state.nodes.filter((n) => n.parents.includes(id)).map((n) => n.id);
  const distance = new Map<string, number>([[start, 0]]);
  let level = [start];
  for (let d = 1; d <= depth; d++) {
    const found = [...new Set(level.flatMap(next))].filter((id) => !distance.has(id));
    for (const id of found) distance.set(id, d);
    level = found;
  }
  return [...distance]
    .filter(([id, d]) => d > 0 && (!kinds || kinds.includes(byId.get(id)!.kind)))
    .sort(([a, da], [b, db]) => da - db || byId.get(a)!.sequence - byId.get(b)!.sequence)
    .slice(0, limit)
    .map(([id]) => id);
}

/** Everything a graph value answers, computed from the graph's readers. */
function readAll(graph: GraphState, probe: AgentState) {
  const ids = [...probe.nodes.map((n) => n.id), 'cw_unknown'];
  const keys = [
    ...new Set(probe.nodes.flatMap((n) => (n.resourceKey === undefined ? [] : [n.resourceKey]))),
  ];
  return {
    count: nodeCount(graph),
    frontier: getFrontier(graph),
    bySequence: [0, ...probe.nodes.map((n) => n.sequence), probe.nodes.length + 1].map(
      (s) => getNodeBySequence(graph, s)?.id,
    ),
    nodes: ids.map((id) => getNode(graph, id)),
    children: ids.map((id) => getChildren(graph, id)),
    isFrontier: ids.map((id) => isFrontier(graph, id)),
    isCurrent: ids.map((id) => isCurrent(graph, id)),
    supersedes: ids.map((id) => getSupersedes(graph, id)?.id),
    supersededBy: ids.map((id) => getSupersededBy(graph, id)?.id),
    heads: getResourceHeads(graph).map((n) => n.id),
    head: keys.map((k) => getResourceHead(graph, k)?.id),
    history: keys.map((k) => getResourceHistory(graph, k).map((n) => n.id)),
    memory: getMemory(graph).map((n) => n.id),
    ancestors: ids.map((id) => walkAncestors(graph, id, { depth: 3, limit: 4 }).map((n) => n.id)),
    descendants: ids.map((id) =>
      walkDescendants(graph, id, { depth: 2, kinds: ['goal', 'resource', 'semantic'] }).map(
        (n) => n.id,
      ),
    ),
  };
}

/** The same answers computed naively from a plain state (the oracle). */
function readRef(state: AgentState, probe: AgentState) {
  const ids = [...probe.nodes.map((n) => n.id), 'cw_unknown'];
  const keys = [
    ...new Set(probe.nodes.flatMap((n) => (n.resourceKey === undefined ? [] : [n.resourceKey]))),
  ];
  const find = (id: string) => state.nodes.find((n) => n.id === id);
  const history = (key: string) => state.nodes.filter((n) => n.resourceKey === key);
  const heads = [
    ...new Set(state.nodes.flatMap((n) => (n.resourceKey === undefined ? [] : [n.resourceKey]))),
  ]
    .map((k) => history(k).at(-1)!)
    .sort((a, b) => a.sequence - b.sequence);
  const neighbour = (id: string, step: number) => {
    const node = find(id);
    if (node?.resourceKey === undefined) return undefined;
    const list = history(node.resourceKey);
    return list[list.indexOf(node) + step]?.id;
  };
  return {
    count: state.nodes.length,
    frontier: state.frontier,
    bySequence: [0, ...probe.nodes.map((n) => n.sequence), probe.nodes.length + 1].map(
      (s) => state.nodes[s - 1]?.id,
    ),
    nodes: ids.map(find),
    children: ids.map((id) => state.nodes.filter((n) => n.parents.includes(id)).map((n) => n.id)),
    isFrontier: ids.map((id) => state.frontier.includes(id)),
    isCurrent: ids.map((id) => {
      const node = find(id);
      return (
        node !== undefined &&
        (node.resourceKey === undefined || history(node.resourceKey).at(-1) === node)
      );
    }),
    supersedes: ids.map((id) => neighbour(id, -1)),
    supersededBy: ids.map((id) => neighbour(id, 1)),
    heads: heads.map((n) => n.id),
    head: keys.map((k) => history(k).at(-1)?.id),
    history: keys.map((k) => history(k).map((n) => n.id)),
    memory: heads.filter((n) => n.resourceKey!.startsWith('semantic:')).map((n) => n.id),
    ancestors: ids.map((id) => (find(id) ? refWalk(state, id, true, 3, 4) : [])),
    descendants: ids.map((id) =>
      find(id) ? refWalk(state, id, false, 2, 1000, ['goal', 'resource', 'semantic']) : [],
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Random histories: each step appends to any earlier version (so most steps branch).

const draftSpec = fc.record({
  kind: fc.constantFrom(...NODE_KINDS.filter((k) => k !== 'semantic')),
  payload: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.string({ maxLength: 3 })),
  parents: fc.option(fc.array(fc.nat(), { maxLength: 3 }), { nil: undefined }),
  resourceKey: fc.option(
    fc.constantFrom('file:a', 'file:b', 'semantic:memory:m', 'semantic:wisdom:w'),
    {
      nil: undefined,
    },
  ),
  advance: fc.option(fc.boolean(), { nil: undefined }),
  unknownParent: fc.nat(30),
});
type DraftSpec = typeof draftSpec extends fc.Arbitrary<infer T> ? T : never;

function toDraft(spec: DraftSpec, known: CausalNode[]): NodeDraft {
  const semantic = spec.resourceKey?.startsWith('semantic:');
  const [, type, key] = spec.resourceKey?.split(':') ?? [];
  const draft: NodeDraft = semantic
    ? { kind: 'semantic', payload: { type: type!, key: key!, content: spec.payload } }
    : { kind: spec.kind, payload: spec.payload };
  if (spec.resourceKey !== undefined) draft.resourceKey = spec.resourceKey;
  if (spec.advance !== undefined) draft.advance = spec.advance;
  if (spec.parents !== undefined) {
    draft.parents = known.length === 0 ? [] : spec.parents.map((p) => known[p % known.length]!.id);
    if (spec.unknownParent === 0) draft.parents.push('cw_not_here');
  }
  return draft;
}

const historyArb = fc.array(
  fc.record({ from: fc.nat(), drafts: fc.array(draftSpec, { minLength: 1, maxLength: 3 }) }),
  { minLength: 1, maxLength: 14 },
);

function emptyGraph(): GraphState {
  const created = createGraph();
  if (!created.ok) throw new Error(created.error.message);
  return created.value;
}

describe('GraphState is a persistent value', () => {
  it('old values answer exactly as before after appends and branching appends', () => {
    fc.assert(
      fc.property(historyArb, (steps) => {
        const versions: { graph: GraphState; state: AgentState; text: string }[] = [];
        const record = (graph: GraphState, state: AgentState) =>
          versions.push({ graph, state, text: JSON.stringify(state) });
        record(emptyGraph(), { version: 1, nodes: [], frontier: [] });
        for (const step of steps) {
          const base = versions[step.from % versions.length]!;
          const drafts = step.drafts.map((d) => toDraft(d, base.state.nodes));
          const expected = refAppend(base.state, drafts);
          const result = appendNodes(base.graph, drafts, T);
          if (expected === 'error') {
            expect(result.ok && 'accepted').toBe(false);
            continue;
          }
          if (!result.ok) throw new Error(result.error.message);
          const exported = exportAgentState(result.value.graph);
          expect(exported).toEqual(expected);
          expect(validateAgentState(JSON.parse(JSON.stringify(exported)))).toEqual({ ok: true });
          record(result.value.graph, expected);
        }
        const probe = versions.reduce((a, b) =>
          b.state.nodes.length > a.state.nodes.length ? b : a,
        ).state;
        for (const version of versions) {
          expect(JSON.stringify(exportAgentState(version.graph))).toBe(version.text);
          expect(readAll(version.graph, probe)).toEqual(readRef(version.state, probe));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('an imported value and the value it was exported from answer alike', () => {
    fc.assert(
      fc.property(historyArb, (steps) => {
        let graph = emptyGraph();
        for (const step of steps) {
          const drafts = step.drafts.map((d) =>
            toDraft({ ...d, unknownParent: 1 }, exportAgentState(graph).nodes),
          );
          const result = appendNodes(graph, drafts, T);
          if (!result.ok) throw new Error(result.error.message);
          graph = result.value.graph;
        }
        const state = exportAgentState(graph);
        const imported = importAgentState(JSON.parse(JSON.stringify(state)));
        if (!imported.ok) throw new Error(imported.error.message);
        expect(readAll(imported.value, state)).toEqual(readAll(graph, state));
      }),
      { numRuns: 100 },
    );
  });

  it('a branch from an old value does not see the other branch, and vice versa', () => {
    const g0 = emptyGraph();
    const a = appendNodes(g0, [{ kind: 'goal', payload: 'root' }], T);
    if (!a.ok) throw new Error('append');
    const g1 = a.value.graph;
    const left = appendNodes(g1, [{ kind: 'resource', payload: 'L', resourceKey: 'r' }], T);
    const right = appendNodes(g1, [{ kind: 'resource', payload: 'R', resourceKey: 'r' }], T);
    if (!left.ok || !right.ok) throw new Error('append');
    const [l, r] = [left.value.nodes[0]!, right.value.nodes[0]!];
    expect(l.sequence).toBe(2);
    expect(r.sequence).toBe(2);
    expect(getNode(left.value.graph, r.id)).toBeUndefined();
    expect(getNode(right.value.graph, l.id)).toBeUndefined();
    expect(getResourceHead(left.value.graph, 'r')?.id).toBe(l.id);
    expect(getResourceHead(right.value.graph, 'r')?.id).toBe(r.id);
    expect(getChildren(g1, a.value.nodes[0]!.id)).toEqual([]);
    expect(getChildren(left.value.graph, a.value.nodes[0]!.id)).toEqual([l.id]);
    expect(getChildren(right.value.graph, a.value.nodes[0]!.id)).toEqual([r.id]);
    expect(nodeCount(g0)).toBe(0);
    expect(getFrontier(g0)).toEqual([]);
    expect(nodeCount(g1)).toBe(1);
    expect(getResourceHead(g1, 'r')).toBeUndefined();
    // Continuing the left branch (its value is the tip of the shared store) stays independent.
    const left2 = appendNodes(
      left.value.graph,
      [{ kind: 'resource', payload: 'L2', resourceKey: 'r' }],
      T,
    );
    if (!left2.ok) throw new Error('append');
    expect(getSupersededBy(left.value.graph, l.id)).toBeUndefined();
    expect(getSupersededBy(left2.value.graph, l.id)?.id).toBe(left2.value.nodes[0]!.id);
    expect(getResourceHistory(right.value.graph, 'r').map((n) => n.id)).toEqual([r.id]);
  });

  it('appending to the newest value shares storage instead of copying it', () => {
    let graph = emptyGraph();
    const first = appendNodes(graph, [{ kind: 'goal', payload: 0 }], T);
    if (!first.ok) throw new Error('append');
    graph = first.value.graph;
    const store = graph.store;
    for (let i = 1; i < 50; i++) {
      const r = appendNodes(graph, [{ kind: 'inference', payload: i }], T);
      if (!r.ok) throw new Error('append');
      graph = r.value.graph;
      expect(graph.store).toBe(store);
    }
    const branch = appendNodes(first.value.graph, [{ kind: 'inference', payload: 'b' }], T);
    if (!branch.ok) throw new Error('append');
    expect(branch.value.graph.store).not.toBe(store);
    expect(Object.isFrozen(graph)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Walks

/** A chain of `n` nodes alternating goal/inference, plus a side branch on node 2. */
function chain(n: number) {
  let graph = emptyGraph();
  const drafts: NodeDraft[] = Array.from({ length: n }, (_, i) => ({
    kind: i % 2 === 0 ? 'goal' : 'inference',
    payload: i,
  }));
  const r = appendNodes(graph, drafts, T);
  if (!r.ok) throw new Error('append');
  graph = r.value.graph;
  return { graph, ids: r.value.nodes.map((x) => x.id) };
}

describe('walks', () => {
  it('go breadth first, by distance then sequence, excluding the start node', () => {
    let graph = emptyGraph();
    const r = appendNodes(
      graph,
      [
        { kind: 'goal', payload: 'root', parents: [] },
        { kind: 'inference', payload: 'b', advance: false },
        { kind: 'inference', payload: 'a' },
      ],
      T,
    );
    if (!r.ok) throw new Error('append');
    const [root, b, a] = r.value.nodes.map((x) => x.id) as [string, string, string];
    const r2 = appendNodes(r.value.graph, [{ kind: 'answer', payload: 'z', parents: [a, b] }], T);
    if (!r2.ok) throw new Error('append');
    graph = r2.value.graph;
    const z = r2.value.nodes[0]!.id;
    expect(walkAncestors(graph, z).map((n) => n.id)).toEqual([b, a, root]);
    expect(walkDescendants(graph, root).map((n) => n.id)).toEqual([b, a, z]);
    expect(walkAncestors(graph, 'cw_unknown')).toEqual([]);
  });

  it('are bounded by depth (default 16) and limit (default 1,000)', () => {
    const { graph, ids } = chain(3000);
    const last = ids.at(-1)!;
    expect(walkAncestors(graph, last)).toHaveLength(16);
    expect(walkAncestors(graph, last, { depth: 5 }).map((n) => n.id)).toEqual(
      ids.slice(-6, -1).reverse(),
    );
    expect(walkAncestors(graph, last, { depth: 2000 })).toHaveLength(256);
    expect(walkDescendants(graph, ids[0]!, { depth: 256 })).toHaveLength(256);
    expect(walkDescendants(graph, ids[0]!, { depth: 256, limit: 10 })).toHaveLength(10);
    expect(walkAncestors(graph, last, { depth: 0 })).toEqual([]);
    expect(walkAncestors(graph, last, { depth: 200, limit: 0 })).toEqual([]);
  });

  it('filter kinds on the output only: traversal passes through other kinds', () => {
    const { graph, ids } = chain(7); // goal, inference, goal, inference, ...
    const found = walkAncestors(graph, ids[6]!, { kinds: ['goal'] });
    expect(found.map((n) => n.id)).toEqual([ids[4], ids[2], ids[0]]);
    const limited = walkAncestors(graph, ids[6]!, { kinds: ['goal'], limit: 2 });
    expect(limited.map((n) => n.id)).toEqual([ids[4], ids[2]]);
    expect(
      walkAncestors(graph, ids[6]!, { kinds: ['inference'], depth: 2 }).map((n) => n.id),
    ).toEqual([ids[5]]);
  });
});
