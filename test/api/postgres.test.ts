/** A subset of the API on Postgres: the same resolvers and read queries, the other provider. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

describeWithPostgres('API on Postgres', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'postgres' });
  });
  afterAll(() => t?.close());

  it('writes, reads the graph with its links and runs, pages, and types its errors', async () => {
    const created = await t.gql(
      'mutation { createThread(input: { threadId: "pg" }) { __typename } }',
    );
    expect(created.data.createThread.__typename).toBe('CreateThreadSuccess');
    const run = await t.gql(
      'mutation { startRun(input: { threadId: "pg", goal: "g", runId: "r1" }) { ... on StartRunSuccess { run { id status } } } }',
    );
    expect(run.data.startRun.run).toEqual({ id: 'r1', status: 'RUNNING' });
    const appended = await t.gql(
      `mutation { appendNodes(input: { threadId: "pg", expectedIndex: 2, nodes: [
        { kind: TOOL_RESULT, payload: { k: "é \\u0001 ✓" }, runId: "r1", taint: { source: "mcp_tool" } },
        { kind: ANSWER, payload: { b: 1, a: 2 } }] }) { __typename ... on AppendNodesSuccess { logIndex } } }`,
    );
    expect(appended.data.appendNodes).toEqual({ __typename: 'AppendNodesSuccess', logIndex: 2 });
    const read = await t.gql(`{ thread(id: "pg") { nodeCount frontier { id }
      nodes(first: 2, kinds: [TOOL_RESULT, ANSWER]) { edges { node { kind payload parents { kind }
        children { kind } run { id } taint { source } } } pageInfo { hasNextPage } } } }`);
    expect(read.errors).toBeUndefined();
    const edges = read.data.thread.nodes.edges.map((e: { node: unknown }) => e.node);
    expect(edges[0]).toMatchObject({
      kind: 'TOOL_RESULT',
      payload: { k: 'é \u0001 ✓' },
      children: [{ kind: 'ANSWER' }],
      run: { id: 'r1' },
      taint: { source: 'mcp_tool' },
    });
    // Stored as canonical text, not jsonb: key order comes back as written canonically.
    expect(JSON.stringify(edges[1].payload)).toBe('{"a":2,"b":1}');
    const conflict = await t.gql(
      'mutation { appendNodes(input: { threadId: "pg", expectedIndex: 2, nodes: [{ kind: SYSTEM, payload: 1 }] }) { __typename ... on ConflictError { actualIndex } } }',
    );
    expect(conflict.data.appendNodes).toEqual({ __typename: 'ConflictError', actualIndex: 3 });
    const runs = await t.gql(
      '{ runs(filter: { status: [RUNNING] }) { edges { node { id thread { id } } } } }',
    );
    expect(runs.data.runs.edges).toEqual([{ node: { id: 'r1', thread: { id: 'pg' } } }]);
    const verify = await t.gql('{ thread(id: "pg") { verify { ok checkedEntries } } }');
    expect(verify.data.thread.verify).toEqual({ ok: true, checkedEntries: 3 });
  });
});
