/**
 * `Thread.projection` over HTTP in process: the compiled view of a thread's current state, its
 * explanations and its typed errors, checked against `compileProjection` on the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPT_TOKEN_COUNTERS } from '../../src/core/projection/gpt-tokenizer.js';
import { compileProjection, type ProjectionInput } from '../../src/core/projection/index.js';
import type { NodeInput } from '../../src/core/thread/plan.js';
import { createTestApp, type TestApp } from './support.js';

let t: TestApp;
const THREAD = 'proj';
const ids = new Map<string, string>();

function ok<T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.value;
}

async function append(label: string, node: NodeInput): Promise<void> {
  const result = ok(await t.engine.appendNodes({ threadId: THREAD, nodes: [node] }));
  ids.set(label, result.nodes[0]!.id);
}

const filler = (i: number, word = 'routine'): NodeInput => ({
  kind: 'inference',
  payload: { text: `${word} step ${i} nothing notable` },
});

beforeAll(async () => {
  t = await createTestApp();
  ok(await t.engine.createThread({ threadId: THREAD }));
  await append('system', { kind: 'system', payload: 'you are a careful engineer' });
  await append('goal', { kind: 'goal', payload: 'migrate the config loader' });
  await append('zeppelin', {
    kind: 'inference',
    payload: { text: 'the zeppelin hangar needs a permit' },
  });
  await append('balloon', {
    kind: 'inference',
    payload: { text: 'the balloon hangar needs a permit' },
  });
  await append('old', {
    kind: 'resource',
    resourceKey: 'resource:file:config.ts',
    payload: { body: 'OLD-BODY-ALPHA' },
  });
  for (let i = 0; i < 30; i++) await append(`f${i}`, filler(i));
  await append('new', {
    kind: 'resource',
    resourceKey: 'resource:file:config.ts',
    payload: { body: 'NEW-BODY-BETA' },
  });
  const later = Array.from({ length: 120 }, (_, i) => filler(i, 'later'));
  ok(await t.engine.appendNodes({ threadId: THREAD, nodes: later }));
});
afterAll(async () => {
  await t.close();
});

const PROJECTION = `query P($id: ID!, $input: ProjectionInput!, $first: Int) {
  thread(id: $id) {
    projection(input: $input) {
      __typename
      ... on Projection {
        prompt tokenEstimate tokenizer nodeIds digest fingerprint omittedCount
        nodes { id kind sequence payload }
        layers { bigBrain peripheral focus timeline }
        selected { nodeId node { id } reasons mandatory score }
        omitted(first: $first) { nodeId node { id payload } score reason replacedBy }
        budget { projectionTargetTokens maxPromptTokens maxNodes requiredTokens shrinkLevel trimmed }
      }
      ... on ProjectionOverflowError { code message requiredTokens maxPromptTokens }
      ... on ValidationError { code message issues { path message } }
    }
  }
}`;

// biome-ignore lint/suspicious/noExplicitAny: response data is read loosely; the assertions check it
async function project(input: Record<string, unknown>, first?: number): Promise<any> {
  const r = await t.gql(PROJECTION, { id: THREAD, input, first });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data.thread.projection;
}

/** The compiler on the engine's own state of the thread. */
async function compiled(input: ProjectionInput, omittedLimit = 0) {
  const state = ok(await t.engine.getState(THREAD));
  return ok(compileProjection(state, input, { omittedLimit, tokenCounters: GPT_TOKEN_COUNTERS }));
}

describe('Thread.projection', () => {
  it('shows the current resource head and the deep query match, not the superseded version', async () => {
    const p = await project({ query: 'Zeppelin?' }, 500);
    expect(p.__typename).toBe('Projection');
    expect(p.prompt).toContain('NEW-BODY-BETA');
    expect(p.prompt).not.toContain('OLD-BODY-ALPHA');
    expect(p.nodeIds).toContain(ids.get('new'));
    expect(p.nodeIds).not.toContain(ids.get('old'));
    expect(p.nodeIds).toContain(ids.get('zeppelin'));
    expect(p.nodes.map((n: { id: string }) => n.id)).toEqual(p.nodeIds);
    expect(p.nodes.find((n: { id: string }) => n.id === ids.get('new')).payload).toEqual({
      body: 'NEW-BODY-BETA',
    });
    const without = await project({});
    expect(without.nodeIds).not.toContain(ids.get('zeppelin'));
    expect(p.prompt).toContain(`<FOCUS>\n${p.layers.focus}\n</FOCUS>`);
    expect(p.prompt).toContain(`<DIGEST>\n${p.digest}\n</DIGEST>`);
    expect(p.tokenizer).toBe('CHARS');
    expect(p.tokenEstimate).toBe(Math.ceil(p.prompt.length / 4));
    expect(p.budget).toMatchObject({
      projectionTargetTokens: 16_000,
      maxPromptTokens: 64_000,
      maxNodes: 48,
    });
  });

  it('lists why each node is in the view and why candidates are out', async () => {
    const p = await project({ query: 'Zeppelin?' }, 500);
    const reasonsOf = (label: string) =>
      p.selected.find((s: { nodeId: string }) => s.nodeId === ids.get(label))?.reasons;
    expect(p.selected.map((s: { nodeId: string }) => s.nodeId)).toEqual(p.nodeIds);
    expect(p.selected.map((s: { node: { id: string } }) => s.node.id)).toEqual(p.nodeIds);
    expect(reasonsOf('system')).toContain('LATEST_SYSTEM');
    expect(reasonsOf('goal')).toContain('LATEST_GOAL');
    expect(reasonsOf('new')).toContain('CURRENT_RESOURCE');
    expect(reasonsOf('zeppelin')).toEqual(['QUERY_MATCH']);
    expect(p.selected.at(-1).reasons).toContain('FRONTIER');
    expect(p.selected.find((s: { nodeId: string }) => s.nodeId === ids.get('new')).mandatory).toBe(
      true,
    );

    expect(p.omitted).toHaveLength(p.omittedCount);
    const old = p.omitted.find((o: { nodeId: string }) => o.nodeId === ids.get('old'));
    expect(old).toMatchObject({ reason: 'SUPERSEDED', replacedBy: ids.get('new') });
    expect(old.node.payload).toEqual({ body: 'OLD-BODY-ALPHA' });
    const filler = p.omitted.find((o: { nodeId: string }) => o.nodeId === ids.get('f20'));
    expect(filler).toMatchObject({ reason: 'NOT_SELECTED', replacedBy: null });
    for (let i = 1; i < p.omitted.length; i++) {
      expect(p.omitted[i - 1].score).toBeGreaterThanOrEqual(p.omitted[i].score);
    }
    const firstThree = await project({ query: 'Zeppelin?' }, 3);
    expect(firstThree.omitted).toEqual(p.omitted.slice(0, 3));
  });

  it('equals compileProjection on the same state, byte for byte, for each tokenizer', async () => {
    for (const [name, enumValue] of [
      ['chars', 'CHARS'],
      ['o200k', 'O200K'],
      ['cl100k', 'CL100K'],
    ] as const) {
      const input = { query: 'config loader', projectionTargetTokens: 900, maxNodes: 20 };
      const p = await project({ ...input, tokenizer: enumValue }, 10);
      const expected = await compiled({ ...input, tokenizer: name }, 10);
      expect(p.prompt).toBe(expected.prompt);
      expect(p.tokenEstimate).toBe(expected.tokenEstimate);
      expect(p.tokenizer).toBe(enumValue);
      expect(p.nodeIds).toEqual(expected.nodeIds);
      expect(p.digest).toBe(expected.digest);
      expect(p.layers).toEqual(expected.layers);
      expect(p.budget).toEqual(expected.budget);
      expect(p.selected.map((s: { score: number }) => s.score)).toEqual(
        expected.selected.map((s) => s.score),
      );
      expect(p.omitted.map((o: { nodeId: string }) => o.nodeId)).toEqual(
        expected.omitted.map((o) => o.id),
      );
    }
  });

  it('answers an impossible ceiling with ProjectionOverflowError and both figures', async () => {
    const p = await project({ maxPromptTokens: 20 });
    expect(p.__typename).toBe('ProjectionOverflowError');
    expect(p.code).toBe('PROJECTION_OVERFLOW');
    expect(p.maxPromptTokens).toBe(20);
    expect(p.requiredTokens).toBeGreaterThan(20);
    const expected = compileProjection(ok(await t.engine.getState(THREAD)), {
      maxPromptTokens: 20,
    });
    expect(expected.ok).toBe(false);
    if (!expected.ok && expected.error.code === 'PROJECTION_OVERFLOW') {
      expect(p.requiredTokens).toBe(expected.error.requiredTokens);
    }
    expect(p.message).toMatch(/\d/);
  });

  it('answers bad input with a ValidationError listing every issue', async () => {
    const p = await project({ maxNodes: 0, maxPromptTokens: -5, query: 'x'.repeat(10_001) });
    expect(p.__typename).toBe('ValidationError');
    expect(p.code).toBe('VALIDATION_FAILED');
    expect(p.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      '$.maxNodes',
      '$.maxPromptTokens',
      '$.query',
    ]);
  });

  it('refuses a bad omitted(first) and an unknown tokenizer as user input', async () => {
    const bad = await t.gql(PROJECTION, { id: THREAD, input: {}, first: -1 });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0]?.message).toContain('first');
    const unknown = await t.gql(PROJECTION, { id: THREAD, input: { tokenizer: 'P50K' } });
    expect(unknown.errors?.[0]?.message).toContain('P50K');
  });

  it('is NOT_FOUND for a missing thread', async () => {
    const r = await t.gql(PROJECTION, { id: 'nope', input: {} });
    expect(r.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
