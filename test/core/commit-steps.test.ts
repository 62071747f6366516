/**
 * The stepped forms the engine drives in time slices give what the one-call forms give: a
 * `state_imported` entry committed in steps has the same text, state hash and effects as
 * commitEvent's; a value rendered in pieces joins to its canonical text; the JSON length counted
 * in steps is JSON.stringify's and stops past its limit.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalListPieces } from '../../src/core/canonical.js';
import {
  appendNodes,
  createGraph,
  exportAgentState,
  runSteps,
  type Steps,
} from '../../src/core/graph/index.js';
import { jsonLengthSteps } from '../../src/core/json-size.js';
import {
  commitEvent,
  commitEventSteps,
  createThreadMachine,
  prepareImportState,
} from '../../src/core/thread/index.js';

/** Runs steps to the end, counting the yields. */
function counted<T>(steps: Steps<T>): { value: T; yields: number } {
  let yields = 0;
  for (;;) {
    const next = steps.next();
    if (next.done) return { value: next.value, yields };
    yields++;
  }
}

function chainState(count: number) {
  const graph = createGraph();
  if (!graph.ok) throw new Error(graph.error.message);
  let g = graph.value;
  for (let from = 0; from < count; from += 500) {
    const drafts = Array.from({ length: 500 }, (_, k) => ({
      kind: (k % 7 === 0 ? 'system' : 'answer') as 'system' | 'answer',
      // Text beyond ASCII and keys out of canonical order, as clients send them.
      payload: { z: from + k, a: `step ${from + k} — ü 😀 "quoted"\n` },
    }));
    const appended = appendNodes(g, drafts, '2026-03-01T00:00:00.000Z');
    if (!appended.ok) throw new Error(appended.error.message);
    g = appended.value.graph;
  }
  return exportAgentState(g);
}

describe('commitEventSteps', () => {
  it('commits a state_imported event as commitEvent does, over many steps', () => {
    const state = chainState(3_000);
    const prepared = runSteps(prepareImportState('t', state, { metadata: { b: 1, a: [2] } }));
    if (!prepared.ok) throw new Error(prepared.error.message);
    const initial = createThreadMachine().initial;
    const stamp = { id: 'entry-1', recordedAt: '2026-03-01T00:00:01.000Z' };
    const options = { importedGraph: prepared.value.importedGraph };
    const whole = commitEvent(initial, prepared.value.event, stamp, options);
    const stepped = counted(commitEventSteps(initial, prepared.value.event, stamp, options));
    if (!whole.ok || !stepped.value.ok) throw new Error('the import failed');
    expect(stepped.yields).toBeGreaterThan(4);
    expect(stepped.value.value.text).toBe(whole.value.text);
    expect(stepped.value.value.entry).toEqual(whole.value.entry);
    expect(stepped.value.value.state.stateHash).toBe(whole.value.state.stateHash);
    expect(stepped.value.value.state.latestSystemNodeId).toBe(whole.value.state.latestSystemNodeId);
    expect(stepped.value.value.effects).toEqual(whole.value.effects);
  });

  it('refuses what commitEvent refuses, naming the node', () => {
    const state = JSON.parse(JSON.stringify(chainState(1_500))) as {
      nodes: Array<{ payload: unknown }>;
    };
    const prepared = runSteps(prepareImportState('t', state, {}));
    if (!prepared.ok) throw new Error(prepared.error.message);
    // Not JSON any more once checked: a function deep in the last node's payload.
    (state.nodes.at(-1)!.payload as Record<string, unknown>).f = () => 1;
    const initial = createThreadMachine().initial;
    const stamp = { id: 'e', recordedAt: '2026-03-01T00:00:01.000Z' };
    const stepped = runSteps(commitEventSteps(initial, prepared.value.event, stamp));
    expect(stepped.ok).toBe(false);
    if (!stepped.ok) {
      expect(stepped.error.code).toBe('VALIDATION_FAILED');
      expect(stepped.error.message).toContain(`$.event.state.nodes[1499].payload.f`);
    }
  });
});

describe('canonicalListPieces', () => {
  it('joins to the canonical text of the value', () => {
    const value = {
      z: 1,
      inner: { list: [{ b: 2, a: 1 }, undefined, 'é', [3, { y: null, x: 'q"' }]], k: 'v' },
      a: 'first',
    };
    const pieces = runSteps(canonicalListPieces(value, ['inner', 'list'], 1));
    expect(pieces?.join('')).toBe(canonicalJson(value));
    const empty = { list: [] as unknown[] };
    expect(runSteps(canonicalListPieces(empty, ['list'], 1))?.join('')).toBe(canonicalJson(empty));
    expect(runSteps(canonicalListPieces({ list: 3 }, ['list'], 1))).toBeUndefined();
  });
});

describe('jsonLengthSteps', () => {
  it("counts JSON.stringify's length, and stops soon past the limit", () => {
    const value = { nodes: chainState(1_000).nodes, n: 12.5, t: true, none: null, list: [] };
    // Counted as written, escapes as one character each: the escaped text here is a bit longer.
    const text = JSON.stringify(value);
    const length = runSteps(jsonLengthSteps(value, Number.POSITIVE_INFINITY));
    const escapes = (text.match(/\\/g) ?? []).length;
    expect(length).toBe(text.length - escapes);
    const stopped = counted(jsonLengthSteps(value, 1_000, 64));
    expect(stopped.value).toBeGreaterThan(1_000);
    expect(stopped.value).toBeLessThan(length / 10);
  });
});
