import { describe, expect, it } from 'vitest';
import {
  appendNodes,
  createGraph,
  exportAgentState,
  type GraphState,
  getChildren,
  getResourceHead,
  getResourceHistory,
  type NodeDraft,
} from '../../src/core/graph/index.js';
import { vecPush } from '../../src/core/thread/vec.js';

const T = '2026-03-01T00:00:00.000Z';
const T2 = '2026-03-01T00:00:01.000Z';

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const append = (graph: GraphState, drafts: NodeDraft[], at = T) =>
  must(appendNodes(graph, drafts, at)).graph;

/** Everything a graph value answers that the fast-forward could get wrong. */
const answers = (graph: GraphState) => {
  const state = exportAgentState(graph);
  return {
    state,
    children: state.nodes.map((n) => getChildren(graph, n.id)),
    head: getResourceHead(graph, 'file:a')?.id,
    history: getResourceHistory(graph, 'file:a').map((n) => n.id),
  };
};

describe('append from an older value (fast-forward)', () => {
  const steps: NodeDraft[][] = [
    [{ kind: 'inference', payload: { step: 0 } }],
    [
      { kind: 'tool_call', payload: { step: 1 }, resourceKey: 'file:a' },
      { kind: 'tool_result', payload: { step: 1, nested: { list: [1, 'two', null] } } },
    ],
    [{ kind: 'answer', payload: { step: 2 }, resourceKey: 'file:a' }],
    [{ kind: 'inference', payload: { step: 3 } }],
  ];
  const values: GraphState[] = [must(createGraph())];
  for (const drafts of steps) values.push(append(values.at(-1)!, drafts));
  const latest = values.at(-1)!;
  const before = answers(latest);

  it('shares the storage when it re-appends exactly the nodes the storage holds next', () => {
    for (let from = 1; from < steps.length; from++) {
      let graph = values[from]!;
      expect(graph.store).toBe(latest.store);
      for (let step = from; step < steps.length; step++) {
        graph = append(graph, steps[step]!);
        expect(graph.store).toBe(latest.store);
        expect(answers(graph)).toEqual(answers(values[step + 1]!));
      }
    }
    expect(answers(latest)).toEqual(before);
  });

  it('copies the storage when anything differs, leaving the newer value as it was', () => {
    const from = values[2]!;
    const differing: NodeDraft[][] = [
      [{ kind: 'answer', payload: { step: 2, other: true }, resourceKey: 'file:a' }],
      [{ kind: 'answer', payload: { step: 2 } }],
      [{ kind: 'inference', payload: { step: 2 }, resourceKey: 'file:a' }],
      [{ kind: 'answer', payload: { step: 2 }, resourceKey: 'file:a', parents: [] }],
    ];
    for (const drafts of differing) {
      const branch = append(from, drafts);
      expect(branch.store).not.toBe(latest.store);
      expect(branch.count).toBe(from.count + 1);
    }
    // Same content, another createdAt: a different node too.
    const later = append(from, steps[2]!, T2);
    expect(later.store).not.toBe(latest.store);
    expect(exportAgentState(later).nodes.at(-1)!.createdAt).toBe(T2);
    expect(answers(latest)).toEqual(before);
  });
});

describe('vecPush onto an older value', () => {
  const same = (a: { n: number }, b: { n: number }) => a.n === b.n;
  const base = [{ n: 1 }, { n: 2 }, { n: 3 }].reduce(
    (vec, item) => vecPush(vec, item),
    vecPush({ items: [], length: 0 }, { n: 0 }),
  );
  const older = { items: base.items, length: 2 };

  it('shares the backing array when the item there is equal', () => {
    const next = vecPush(older, { n: 2 }, same);
    expect(next.items).toBe(base.items);
    expect(next.length).toBe(3);
  });

  it('copies it otherwise, or without an equality', () => {
    for (const next of [vecPush(older, { n: 9 }, same), vecPush(older, { n: 2 })]) {
      expect(next.items).not.toBe(base.items);
      expect(next.items.slice(0, next.length).map((i) => i.n)).toEqual([0, 1, next.items[2]!.n]);
    }
    expect(base.items.map((i) => i.n)).toEqual([0, 1, 2, 3]);
  });
});
