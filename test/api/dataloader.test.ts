/**
 * N+1 guard: a query for N nodes with parents, children, run and taint makes the same, small
 * number of read-API calls for 10 nodes and for 100 (every read-API call is a bounded number of
 * database statements: one per thread it touches).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const QUERY = `query($t: ID!, $n: Int!) { thread(id: $t) { nodes(first: $n) { edges { node {
  id parents { id kind } children { id } run { id status } taint { source derivedFrom } } } } } }`;

/** A thread with `count` nodes: a chain with a side branch every third node, half written by a run. */
async function seed(threadId: string, count: number) {
  const create = await t.gql(
    `mutation { createThread(input: { threadId: "${threadId}" }) { __typename } }`,
  );
  expect(create.data.createThread.__typename).toBe('CreateThreadSuccess');
  const started = await t.gql(
    `mutation { startRun(input: { threadId: "${threadId}", goal: "g" }) { ... on StartRunSuccess { run { id } } } }`,
  );
  const runId = started.data.startRun.run.id as string;
  const nodes = Array.from({ length: count - 1 }, (_, i) => ({
    kind: i % 3 === 0 ? 'TOOL_RESULT' : 'INFERENCE',
    payload: { i },
    ...(i % 2 === 0 ? { runId } : {}),
    ...(i === 5 ? { taint: { source: 'mcp_tool' } } : {}),
    ...(i % 3 === 2 ? { advance: false } : {}),
  }));
  const appended = await t.gql(
    `mutation($input: AppendNodesInput!) { appendNodes(input: $input) { __typename ... on Error { message } } }`,
    { input: { threadId, nodes } },
  );
  expect(appended.data.appendNodes.__typename).toBe('AppendNodesSuccess');
}

async function callsFor(threadId: string, n: number) {
  t.resetCalls();
  const r = await t.gql(QUERY, { t: threadId, n });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  const edges = r.data.thread.nodes.edges as Array<{
    node: { run: unknown; taint: unknown; children: unknown[] };
  }>;
  expect(edges).toHaveLength(n);
  expect(edges.some((e) => e.node.run !== null)).toBe(true);
  expect(edges.some((e) => e.node.taint !== null)).toBe(true);
  expect(edges.some((e) => e.node.children.length > 0)).toBe(true);
  return { total: t.totalCalls(), byMethod: Object.fromEntries(t.calls) };
}

describe('per-request DataLoaders', () => {
  it('a nested query for 100 nodes makes as many read calls as one for 10', async () => {
    await seed('small', 10);
    await seed('large', 100);
    const small = await callsFor('small', 10);
    const large = await callsFor('large', 100);
    expect(large.byMethod).toEqual(small.byMethod);
    // thread, the page, children (one batch), runs (one batch); parents come from the page.
    expect(large.byMethod).toEqual({ threads: 1, nodePage: 1, children: 1, runs: 1 });
  });

  it('five aliases of one thread share one batched read', async () => {
    t.resetCalls();
    const aliases = Array.from({ length: 5 }, (_, i) => `a${i}: thread(id: "large") { id }`).join(
      ' ',
    );
    const r = await t.gql(`{ ${aliases} }`);
    expect(r.errors).toBeUndefined();
    expect(t.calls.get('threads')).toBe(1);
  });
});
