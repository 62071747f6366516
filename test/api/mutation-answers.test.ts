/**
 * A mutation answers from what the engine committed: asking for the thread, the nodes it wrote
 * (and their parents) or the run it changed reads nothing back through the read API (counted on
 * the real store's reads), and what it answers is what a query asks of the database afterwards.
 * Loaders still never serve a row from before a write: two mutations with a query between them
 * answer fresh values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

const THREAD = `id createdAt updatedAt metadata nodeTypes { name description } allowDynamicNodeTypes
  logLength nodeCount stateHash forkedFrom { upToIndex } saltedPayloads
  spend { inputTokens outputTokens costUsd calls } frontier { id }`;
const NODE = `id threadId kind parentIds payload createdAt sequence resourceKey isFrontier isCurrent
  taint { source derivedFrom } usage runId logIndex`;
const RUN = `id threadId status goal memory createdAt updatedAt iterationCount
  spend { inputTokens outputTokens costUsd calls }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(() => t?.close());

  /** `query`'s data, with the read-API calls it made. */
  // biome-ignore lint/suspicious/noExplicitAny: response data is read loosely
  async function counted(query: string, variables?: Record<string, unknown>): Promise<any> {
    t.resetCalls();
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return { data: r.data, reads: Object.fromEntries(t.calls) };
  }

  const threadNow = async (id: string) =>
    (await t.gql(`{ thread(id: "${id}") { ${THREAD} } }`)).data.thread;
  const nodeNow = async (threadId: string, id: string) =>
    (await t.gql(`{ causalNode(threadId: "${threadId}", id: "${id}") { ${NODE} } }`)).data
      .causalNode;
  const runNow = async (id: string) => (await t.gql(`{ run(id: "${id}") { ${RUN} } }`)).data.run;

  it('createThread, startRun, appendNodes and remember answer without reading', async () => {
    for (const [threadId, salted] of [
      ['plain', false],
      ['salted', true],
    ] as const) {
      const created = await counted(
        `mutation { createThread(input: { threadId: "${threadId}", metadata: { team: "a" },
          saltPayloads: ${salted}, expiresAt: "2031-01-01T00:00:00Z" }) {
          ... on CreateThreadSuccess { thread { ${THREAD} expiresAt } } } }`,
      );
      expect(created.reads).toEqual({});
      expect(created.data.createThread.thread).toEqual({
        ...(await threadNow(threadId)),
        expiresAt: '2031-01-01T00:00:00.000Z',
      });

      const started = await counted(
        `mutation { startRun(input: { threadId: "${threadId}", goal: "g", runId: "r-${threadId}" }) {
          ... on StartRunSuccess { run { ${RUN} thread { ${THREAD} } } } } }`,
      );
      expect(started.reads).toEqual({});
      const { thread: runThread, ...run } = started.data.startRun.run;
      expect(run).toEqual(await runNow(`r-${threadId}`));
      expect(runThread).toEqual(await threadNow(threadId));

      const appended = await counted(
        `mutation($input: AppendNodesInput!) { appendNodes(input: $input) {
          ... on AppendNodesSuccess { logIndex nodes { ${NODE} parents { ${NODE} } run { ${RUN} } }
            thread { ${THREAD} } } } }`,
        {
          input: {
            threadId,
            nodes: [
              {
                kind: 'TOOL_RESULT',
                payload: { text: 'found' },
                runId: `r-${threadId}`,
                taint: { source: 'mcp_tool' },
                usage: { model: 'm', inputTokens: 3, outputTokens: 4, costUsd: 0.5 },
              },
              { kind: 'INFERENCE', payload: { text: 'so' }, resourceKey: 'doc' },
            ],
          },
        },
      );
      expect(appended.reads).toEqual({});
      const answer = appended.data.appendNodes;
      expect(answer.thread).toEqual(await threadNow(threadId));
      expect(answer.nodes).toHaveLength(2);
      for (const node of answer.nodes) {
        const { parents, run: nodeRun, ...own } = node;
        expect(own).toEqual(await nodeNow(threadId, node.id));
        expect(parents).toEqual(
          await Promise.all(parents.map((p: { id: string }) => nodeNow(threadId, p.id))),
        );
        if (nodeRun !== null) expect(nodeRun).toEqual(await runNow(`r-${threadId}`));
      }
      expect(answer.nodes[0].run.spend.calls).toBe(1);
      expect(answer.nodes[1].taint.derivedFrom).toEqual([answer.nodes[0].id]);
      if (salted) expect(Object.keys(answer.nodes[0].payload)).toContain('weft:salt');

      const remembered = await counted(
        `mutation { remember(input: { threadId: "${threadId}", type: "preference", key: "tone",
          content: "dry" }) { ... on RememberSuccess { logIndex node { ${NODE} }
          memory { type key node { id payload } } thread { ${THREAD} } } } }`,
      );
      expect(remembered.reads).toEqual({});
      const memory = remembered.data.remember;
      expect(memory.node).toEqual(await nodeNow(threadId, memory.node.id));
      expect(memory.thread).toEqual(await threadNow(threadId));
    }
  });

  it('a thread’s expiry, which no log entry holds, is read when asked after a write', async () => {
    await t.gql(
      'mutation { createThread(input: { threadId: "expiring", expiresAt: "2032-02-02T00:00:00Z" }) { __typename } }',
    );
    const appended = await counted(
      `mutation { appendNodes(input: { threadId: "expiring", nodes: [{ kind: INFERENCE, payload: 1 }] }) {
        ... on AppendNodesSuccess { thread { logLength expiresAt } } } }`,
    );
    expect(appended.data.appendNodes.thread).toEqual({
      logLength: 2,
      expiresAt: '2032-02-02T00:00:00.000Z',
    });
    expect(appended.reads).toEqual({ threads: 1 });
  });

  it('a retry under an idempotency key answers like the first call, reading back', async () => {
    await t.gql('mutation { createThread(input: { threadId: "retried" }) { __typename } }');
    const append = `mutation { appendNodes(input: { threadId: "retried", idempotencyKey: "k1",
      nodes: [{ kind: INFERENCE, payload: { n: 1 } }] }) {
      ... on AppendNodesSuccess { logIndex nodes { ${NODE} } thread { logLength } } } }`;
    const first = await counted(append);
    expect(first.reads).toEqual({});
    const retry = await counted(append);
    expect(retry.data).toEqual(first.data);
    expect(retry.reads).toEqual({ nodes: 1, threads: 1 });
  });

  it('a fork answers without reading and as the fork reads afterwards', async () => {
    await t.gql('mutation { createThread(input: { threadId: "source" }) { __typename } }');
    await t.gql(
      'mutation { appendNodes(input: { threadId: "source", nodes: [{ kind: INFERENCE, payload: 1 }] }) { __typename } }',
    );
    const forked = await counted(
      `mutation { forkThread(input: { threadId: "source", newThreadId: "copy" }) {
        ... on ForkThreadSuccess { thread { ${THREAD} } } } }`,
    );
    expect(forked.reads).toEqual({});
    expect(forked.data.forkThread.thread).toEqual(await threadNow('copy'));
    const appended = await counted(
      `mutation { appendNodes(input: { threadId: "copy", nodes: [{ kind: ANSWER, payload: 2 }] }) {
        ... on AppendNodesSuccess { nodes { ${NODE} parents { ${NODE} } } thread { ${THREAD} } } } }`,
    );
    expect(appended.reads).toEqual({});
    const [node] = appended.data.appendNodes.nodes;
    const { parents, ...own } = node;
    expect(own).toEqual(await nodeNow('copy', node.id));
    expect(parents).toEqual([await nodeNow('copy', parents[0].id)]);
    expect(appended.data.appendNodes.thread).toEqual(await threadNow('copy'));
  });

  it('two mutations with a query between them answer fresh values', async () => {
    await t.gql('mutation { createThread(input: { threadId: "twice" }) { __typename } }');
    const r = await t.gql(
      `mutation($a: AppendNodesInput!, $b: AppendNodesInput!) {
        first: appendNodes(input: $a) { ... on AppendNodesSuccess {
          nodes { id isFrontier } thread { logLength nodeCount frontier { id isFrontier } } } }
        second: appendNodes(input: $b) { ... on AppendNodesSuccess {
          nodes { id isFrontier parents { id isFrontier } }
          thread { logLength nodeCount frontier { id isFrontier } } } }
        third: remember(input: { threadId: "twice", type: "preference", key: "k", content: 1 }) {
          ... on RememberSuccess { thread { logLength nodeCount } } } }`,
      {
        a: { threadId: 'twice', nodes: [{ kind: 'INFERENCE', payload: 'a' }] },
        b: { threadId: 'twice', nodes: [{ kind: 'ANSWER', payload: 'b' }] },
      },
    );
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const { first, second, third } = r.data;
    const a = first.nodes[0].id;
    const b = second.nodes[0].id;
    expect(first.thread).toEqual({
      logLength: 2,
      nodeCount: 1,
      frontier: [{ id: a, isFrontier: true }],
    });
    // The second answer shows the first node as it is after the second write: no longer a head.
    expect(second.nodes).toEqual([
      { id: b, isFrontier: true, parents: [{ id: a, isFrontier: false }] },
    ]);
    expect(second.thread).toEqual({
      logLength: 3,
      nodeCount: 2,
      frontier: [{ id: b, isFrontier: true }],
    });
    expect(third.thread).toEqual({ logLength: 4, nodeCount: 3 });

    // Between two writes, the first answer reads the thread's nodes (into the loaders); the
    // second write's answer must not be served those rows from before it.
    const between = await t.gql(
      `mutation {
        one: appendNodes(input: { threadId: "twice", nodes: [{ kind: INFERENCE, payload: "c" }] }) {
          ... on AppendNodesSuccess { thread { nodes(first: 10, direction: DESC) {
            edges { node { id payload isFrontier } } } } } }
        two: appendNodes(input: { threadId: "twice", nodes: [{ kind: INFERENCE, payload: "d" }] }) {
          ... on AppendNodesSuccess { nodes { payload parents { id payload isFrontier } }
            thread { logLength nodes(first: 2, direction: DESC) {
              edges { node { payload isFrontier } } } } } } }`,
    );
    expect(between.errors, JSON.stringify(between.errors)).toBeUndefined();
    const [c] = between.data.one.thread.nodes.edges.map(
      (e: { node: { id: string; payload: unknown; isFrontier: boolean } }) => e.node,
    );
    expect(c).toMatchObject({ payload: 'c', isFrontier: true });
    expect(between.data.two.nodes).toEqual([
      { payload: 'd', parents: [{ id: c.id, payload: 'c', isFrontier: false }] },
    ]);
    expect(between.data.two.thread.logLength).toBe(6);
    expect(between.data.two.thread.nodes.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { payload: 'd', isFrontier: true },
      { payload: 'c', isFrontier: false },
    ]);
  });
}

describe('mutation answers on SQLite', () => suite('sqlite'));
describeWithPostgres('mutation answers on Postgres', () => suite('postgres'));
