/**
 * A mutation answers from what the engine committed: asking any mutation that writes a log entry
 * for the thread, the nodes it wrote (and their parents), the frontier or the run it changed
 * reads nothing back through the read API (counted on the real store's reads), and what it
 * answers is what a query asks of the database afterwards. What a command did not write is read:
 * a thread's expiry after a log entry, the thread of setThreadExpiry (no log entry), and a
 * retry under an idempotency key, answered from its stored record, reads what it shows. Loaders
 * still never serve a row from before a write: two mutations with a query between them answer
 * fresh values.
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

  it('dispatch, resolveApproval, recordUsage, cancelRun and importWorkflowState answer without reading', async () => {
    await t.gql('mutation { createThread(input: { threadId: "runs" }) { __typename } }');
    await t.gql(
      'mutation { startRun(input: { threadId: "runs", goal: "g", runId: "r1" }) { __typename } }',
    );
    const RUN_ANSWER = `run { ${RUN} waitingFor thread { ${THREAD} } } logIndex`;
    /** The answer to `mutation`, read nothing back, is what a query reads afterwards. */
    const answersFromCommit = async (field: string, mutation: string, runId: string) => {
      const written = await counted(mutation);
      expect(written.reads, field).toEqual({});
      const { thread, ...run } = written.data[field].run;
      const { waitingFor, ...own } = run;
      expect(own, field).toEqual(await runNow(runId));
      expect(waitingFor, field).toBe(
        (await t.gql(`{ run(id: "${runId}") { waitingFor } }`)).data.run.waitingFor,
      );
      expect(thread, field).toEqual(await threadNow('runs'));
      return run;
    };

    const waiting = await answersFromCommit(
      'dispatch',
      `mutation { dispatch(input: { runId: "r1", action: { type: REQUEST_HUMAN_INPUT,
        payload: { pending_approval: { question: "ok?" } } } }) {
        ... on DispatchSuccess { ${RUN_ANSWER} } } }`,
      'r1',
    );
    expect(waiting.waitingFor).toBe('human_approval');
    const resumed = await answersFromCommit(
      'resolveApproval',
      `mutation { resolveApproval(input: { runId: "r1", decision: "approved" }) {
        ... on ResolveApprovalSuccess { ${RUN_ANSWER} } } }`,
      'r1',
    );
    expect(resumed.status).toBe('RUNNING');
    const charged = await answersFromCommit(
      'recordUsage',
      `mutation { recordUsage(input: { runId: "r1", model: "m", inputTokens: 5, outputTokens: 6,
        costUsd: 0.25 }) { ... on RecordUsageSuccess { ${RUN_ANSWER} } } }`,
      'r1',
    );
    expect(charged.spend.calls).toBe(1);
    const cancelled = await answersFromCommit(
      'cancelRun',
      `mutation { cancelRun(input: { runId: "r1", reason: "done" }) {
        ... on CancelRunSuccess { ${RUN_ANSWER} } } }`,
      'r1',
    );
    expect(cancelled.status).toBe('CANCELLED');

    const state = (await t.gql('{ run(id: "r1") { workflowState } }')).data.run.workflowState;
    const imported = await counted(
      `mutation($s: JSON!) { importWorkflowState(input: { threadId: "runs", state: $s }) {
        ... on ImportWorkflowStateSuccess { ${RUN_ANSWER} } } }`,
      { s: { ...state, run_id: 'r2' } },
    );
    expect(imported.reads).toEqual({});
    const { thread, waitingFor: _w, ...run } = imported.data.importWorkflowState.run;
    expect(run).toEqual(await runNow('r2'));
    expect(thread).toEqual(await threadNow('runs'));
  });

  it('importState and redactNodes answer without reading', async () => {
    await t.gql('mutation { createThread(input: { threadId: "exported" }) { __typename } }');
    const appended = await t.gql(
      `mutation { appendNodes(input: { threadId: "exported", nodes: [
        { kind: INFERENCE, payload: { text: "kept" } }, { kind: ANSWER, payload: { text: "secret" } }] }) {
        ... on AppendNodesSuccess { nodes { id } } } }`,
    );
    const [, secret] = appended.data.appendNodes.nodes.map((n: { id: string }) => n.id);
    const exported = (await t.gql('{ thread(id: "exported") { state } }')).data.thread.state;

    const imported = await counted(
      `mutation($s: JSON!) { importState(input: { threadId: "imported", state: $s,
        metadata: { from: "exported" }, expiresAt: "2033-03-03T00:00:00Z" }) {
        ... on ImportStateSuccess { logIndex thread { ${THREAD} expiresAt } } } }`,
      { s: exported },
    );
    expect(imported.reads).toEqual({});
    expect(imported.data.importState.thread).toEqual({
      ...(await threadNow('imported')),
      expiresAt: '2033-03-03T00:00:00.000Z',
    });

    // The redacted node is the thread's head: the answer shows it withheld, as the rows hold it.
    const SHOWN = `${THREAD} frontier { payload }`;
    const redacted = await counted(
      `mutation { redactNodes(input: { threadId: "exported", nodeIds: ["${secret}"], reason: "asked" }) {
        ... on RedactNodesSuccess { redactedNodeIds logLength thread { ${SHOWN} } } } }`,
    );
    expect(redacted.reads).toEqual({});
    expect(redacted.data.redactNodes.redactedNodeIds).toEqual([secret]);
    const thread = redacted.data.redactNodes.thread;
    expect(thread).toEqual((await t.gql(`{ thread(id: "exported") { ${SHOWN} } }`)).data.thread);
    expect(thread.frontier).toEqual([{ id: secret, payload: expect.anything() }]);
    expect(JSON.stringify(thread.frontier)).not.toContain('secret');
  });

  it('setThreadExpiry answers the expiry it set; the thread, which it does not write, is read', async () => {
    await t.gql('mutation { createThread(input: { threadId: "expiry" }) { __typename } }');
    const set = await counted(
      `mutation { setThreadExpiry(input: { threadId: "expiry", expiresAt: "2034-04-04T00:00:00Z" }) {
        ... on SetThreadExpirySuccess { threadId expiresAt } } }`,
    );
    expect(set.reads).toEqual({});
    expect(set.data.setThreadExpiry).toEqual({
      threadId: 'expiry',
      expiresAt: '2034-04-04T00:00:00.000Z',
    });
    // No log entry: the engine holds no view of the thread row it changed, so the row is read,
    // after the write (the new expiry, never one from before it).
    const shown = await counted(
      `mutation { setThreadExpiry(input: { threadId: "expiry", expiresAt: null }) {
        ... on SetThreadExpirySuccess { thread { expiresAt logLength } } } }`,
    );
    expect(shown.data.setThreadExpiry.thread).toEqual({ expiresAt: null, logLength: 1 });
    expect(shown.reads).toEqual({ threads: 1 });
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
