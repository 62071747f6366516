/**
 * The public contract end to end through HTTP in process: every query, type field, argument and mutation,
 * with the typed errors each can return. A coverage check at the end fails when a §6 name was
 * not exercised by some executed document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_NAMES, createCoverage } from './coverage.js';
import { createTestApp, type TestApp } from './support.js';

const coverage = createCoverage();
let t: TestApp;

/** Response data, read loosely: the assertions check its shape. */
// biome-ignore lint/suspicious/noExplicitAny: see above
type Loose = any;

/** Runs a document, records its coverage, and fails on any GraphQL error. */
async function ok<T = Loose>(query: string, variables?: Record<string, unknown>): Promise<T> {
  coverage.record(query);
  const r = await t.gql(query, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data as T;
}

/** Runs a mutation that must answer with a typed error of `typename`; returns that error. */
async function typed(query: string, typename: string, variables?: Record<string, unknown>) {
  const data = await ok(query, variables);
  const [result] = Object.values(data as Record<string, { __typename: string }>);
  expect(result!.__typename, JSON.stringify(result)).toBe(typename);
  return result as Loose;
}

/** Selections of the errors every mutation can return. */
const ERR_T = `__typename ... on Error { code message }
  ... on ConflictError { expectedIndex actualIndex }
  ... on ValidationError { issues { path message } }
  ... on InvalidStateError { nodeId }
  ... on NotFoundError { entity id }
  ... on IdempotencyKeyReusedError { key }`;
/** …and of run mutations (and appendNodes / remember, which charge runs). */
const ERR = `${ERR_T} ... on InvalidTransitionError { from to }`;

const NODE =
  'id kind sequence parentIds payload resourceKey isFrontier isCurrent logIndex createdAt';

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('the public contract over HTTP', () => {
  let threadId: string;
  let system: string;
  let tool: string;
  let answer: string;
  let runId: string;

  it('createThread, then reads the thread', async () => {
    const data = await ok(`mutation {
      createThread(input: { threadId: "t1", metadata: { project: "demo" },
        nodeTypes: [{ name: "preference", description: "what the user likes" }, { name: "memory", description: "run memory" }],
        allowDynamicNodeTypes: false, idempotencyKey: "create-t1" }) {
        ${ERR_T} ... on CreateThreadSuccess { thread { id createdAt metadata logLength
          nodeTypes { name description } allowDynamicNodeTypes } }
      }
    }`);
    expect(data.createThread.thread).toMatchObject({
      id: 't1',
      metadata: { project: 'demo' },
      logLength: 1,
      allowDynamicNodeTypes: false,
      nodeTypes: [
        { name: 'preference', description: 'what the user likes' },
        { name: 'memory', description: 'run memory' },
      ],
    });
    threadId = 't1';
    // The same key and request: the first result, nothing written.
    const again = await ok(`mutation {
      createThread(input: { threadId: "t1", metadata: { project: "demo" },
        nodeTypes: [{ name: "preference", description: "what the user likes" }, { name: "memory", description: "run memory" }],
        allowDynamicNodeTypes: false, idempotencyKey: "create-t1" }) {
        ${ERR_T} ... on CreateThreadSuccess { thread { id logLength } } }
    }`);
    expect(again.createThread.thread).toEqual({ id: 't1', logLength: 1 });
    const reused = await typed(
      `mutation { createThread(input: { threadId: "t2", idempotencyKey: "create-t1" }) { ${ERR_T} } }`,
      'IdempotencyKeyReusedError',
    );
    expect(reused).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', key: 'create-t1' });
    const taken = await typed(
      `mutation { createThread(input: { threadId: "t1" }) { ${ERR_T} } }`,
      'ConflictError',
    );
    expect(taken.code).toBe('CONFLICT');
  });

  it('appendNodes with parents, taint, usage, resource keys; conflicts and bad input are typed', async () => {
    const data = await ok(
      `mutation($t: ID!) {
        appendNodes(input: { threadId: $t, expectedIndex: 1, nodes: [
          { kind: SYSTEM, payload: { text: "You are helpful" } },
          { kind: TOOL_RESULT, payload: { html: "<b>rain</b>" },
            taint: { source: "mcp_tool", toolName: "web", serverId: "s1", agentId: "a1" } },
          { kind: RESOURCE, payload: { v: 1 }, resourceKey: "doc:plan", advance: false }
        ] }) {
          ${ERR}
          ... on AppendNodesSuccess { logIndex thread { logLength } nodes { ${NODE} taint { source toolName } } }
        }
      }`,
      { t: threadId },
    );
    const { nodes, logIndex, thread } = data.appendNodes;
    expect(logIndex).toBe(1);
    expect(thread.logLength).toBe(2);
    expect(nodes.map((n: { kind: string }) => n.kind)).toEqual([
      'SYSTEM',
      'TOOL_RESULT',
      'RESOURCE',
    ]);
    expect(nodes[1].taint).toEqual({ source: 'mcp_tool', toolName: 'web' });
    [system, tool] = [nodes[0].id, nodes[1].id];
    const second = await ok(
      `mutation($t: ID!, $p: [ID!]) {
        appendNodes(input: { threadId: $t, nodes: [
          { kind: ANSWER, payload: "It rains", parents: $p, usage: { model: "gpt-4o", inputTokens: 10, outputTokens: 5, costUsd: 0.01 } },
          { kind: RESOURCE, payload: { v: 2 }, resourceKey: "doc:plan", advance: false }
        ] }) { ${ERR} ... on AppendNodesSuccess { nodes { id taint { source derivedFrom } } } }
      }`,
      { t: threadId, p: [tool] },
    );
    answer = second.appendNodes.nodes[0].id;
    expect(second.appendNodes.nodes[0].taint.derivedFrom).toEqual([tool]);

    const conflict = await typed(
      `mutation { appendNodes(input: { threadId: "t1", expectedIndex: 1, nodes: [{ kind: SYSTEM, payload: 1 }] }) { ${ERR} } }`,
      'ConflictError',
    );
    expect(conflict).toMatchObject({ expectedIndex: 1, actualIndex: 3 });
    const unknownParent = await typed(
      `mutation { appendNodes(input: { threadId: "t1", nodes: [{ kind: SYSTEM, payload: 1, parents: ["cw_nope"] }] }) { ${ERR} } }`,
      'ValidationError',
    );
    expect(unknownParent.code).toBe('UNKNOWN_PARENT');
    const missing = await typed(
      `mutation { appendNodes(input: { threadId: "nope", nodes: [{ kind: SYSTEM, payload: 1 }] }) { ${ERR} } }`,
      'NotFoundError',
    );
    expect(missing).toMatchObject({ entity: 'Thread', id: 'nope' });
    const empty = await typed(
      `mutation { appendNodes(input: { threadId: "t1", nodes: [] }) { ${ERR} } }`,
      'ValidationError',
    );
    expect(empty.issues[0].path).toBe('$.input.nodes');
  });

  it('remember writes versioned memory; a type outside the vocabulary is a ValidationError', async () => {
    for (const content of ['tea', 'coffee']) {
      const data = await ok(
        `mutation($c: JSON!) { remember(input: { threadId: "t1", type: "Preference", key: "Drink", content: $c }) {
          ${ERR} ... on RememberSuccess { logIndex node { id resourceKey } memory { type key content tainted } } } }`,
        { c: content },
      );
      expect(data.remember.memory).toEqual({
        type: 'preference',
        key: 'drink',
        content,
        // Written with the frontier (the answer derived from tool output) as parents: tainted.
        tainted: true,
      });
    }
    const refused = await typed(
      `mutation { remember(input: { threadId: "t1", type: "secret", key: "k", content: 1 }) { ${ERR} } }`,
      'ValidationError',
    );
    expect(refused.code).toBe('SEMANTIC_TYPE_NOT_ALLOWED');
  });

  it('reads the graph: frontier, nodes pages, links, versions, walks, resources, memory, events', async () => {
    const data = await ok(
      `query($t: ID!, $s: ID!, $a: ID!) {
        thread(id: $t) {
          logLength nodeCount
          frontier { id }
          frontierNodes(first: 5) { totalCount edges { node { id } } }
          page1: nodes(first: 2) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
          kinds: nodes(kinds: [RESOURCE], afterSequence: 1) { edges { node { id sequence isCurrent
            supersedes { id } supersededBy { id } } } }
          system: causalNode(id: $s) { children { id } childNodes(first: 1) { totalCount edges { node { id } } }
            descendants(depth: 2, kinds: [ANSWER]) { id } }
          answer: causalNode(id: $a) { parents { id } ancestors(depth: 3, kinds: [SYSTEM, TOOL_RESULT]) { id } }
          resources { resourceKey payload }
          memory(type: "preference", key: "drink") { type key content node { id } history { payload } tainted }
          all: memory { key }
          events(afterIndex: 2, first: 2) { edges { node { index id type recordedAt entry } } }
        }
      }`,
      { t: threadId, s: system, a: answer },
    );
    const th = data.thread;
    expect(th.logLength).toBe(5);
    expect(th.nodeCount).toBe(7);
    expect(th.frontier.map((n: { id: string }) => n.id)).toEqual([answer]);
    expect(th.frontierNodes).toEqual({ totalCount: 1, edges: [{ node: { id: answer } }] });
    expect(th.page1.edges).toHaveLength(2);
    expect(th.page1.pageInfo.hasNextPage).toBe(true);
    const page2 = await ok(
      `query($t: ID!, $after: String) { thread(id: $t) { nodes(first: 100, after: $after) { edges { node { sequence } } pageInfo { hasNextPage } } } }`,
      { t: threadId, after: th.page1.pageInfo.endCursor },
    );
    expect(
      page2.thread.nodes.edges.map((e: { node: { sequence: number } }) => e.node.sequence),
    ).toEqual([3, 4, 5, 6, 7]);
    const [v1, v2] = th.kinds.edges.map((e: { node: unknown }) => e.node);
    expect(v1).toMatchObject({ isCurrent: false, supersedes: null, supersededBy: { id: v2.id } });
    expect(v2).toMatchObject({ isCurrent: true, supersedes: { id: v1.id }, supersededBy: null });
    expect(th.system.children.map((n: { id: string }) => n.id)).toContain(tool);
    expect(th.system.childNodes.totalCount).toBe(th.system.children.length);
    expect(th.system.childNodes.edges).toEqual([{ node: th.system.children[0] }]);
    expect(th.system.descendants.map((n: { id: string }) => n.id)).toEqual([answer]);
    expect(th.answer.parents).toEqual([{ id: tool }]);
    expect(th.answer.ancestors.map((n: { id: string }) => n.id)).toEqual([tool, system]);
    expect(th.resources.map((r: { resourceKey: string }) => r.resourceKey)).toEqual([
      'doc:plan',
      'semantic:preference:drink',
    ]);
    expect(th.memory).toHaveLength(1);
    expect(th.memory[0].content).toBe('coffee');
    expect(
      th.memory[0].history.map((h: { payload: { content: string } }) => h.payload.content),
    ).toEqual(['tea', 'coffee']);
    expect(th.all).toEqual([{ key: 'drink' }]);
    expect(th.events.edges.map((e: { node: { index: number } }) => e.node.index)).toEqual([3, 4]);
    expect(th.events.edges[0].node.entry.event.type).toBe('nodes_appended');

    const node = await ok(
      `query($t: ID!, $a: ID!) { causalNode(threadId: $t, id: $a) { ${NODE} } }`,
      {
        t: threadId,
        a: answer,
      },
    );
    expect(node.causalNode).toMatchObject({
      id: answer,
      kind: 'ANSWER',
      payload: 'It rains',
      isFrontier: true,
    });
  });

  it('time travel, verify and spend', async () => {
    const data = await ok(`{ thread(id: "t1") {
      now: state past: state(atIndex: 2)
      verify(strict: true) { ok checkedEntries firstBadIndex message }
      spend { inputTokens outputTokens totalTokens costUsd calls } } }`);
    expect(data.thread.now.nodes).toHaveLength(7);
    expect(data.thread.past).toMatchObject({ version: 1 });
    expect(data.thread.past.nodes).toHaveLength(3);
    expect(data.thread.verify).toEqual({
      ok: true,
      checkedEntries: 5,
      firstBadIndex: null,
      message: null,
    });
    expect(data.thread.spend).toMatchObject({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      calls: 1,
    });
    const beyond = await t.gql('{ thread(id: "t1") { state(atIndex: 99) } }');
    expect(beyond.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('projection: the prompt view, and ProjectionOverflowError under an impossible ceiling', async () => {
    const PROJ = `query P($input: ProjectionInput!) { thread(id: "t1") { projection(input: $input) {
      __typename
      ... on Projection { prompt tokenEstimate nodeIds nodes { id kind } digest
        layers { bigBrain peripheral focus timeline } }
      ... on ProjectionOverflowError { code requiredTokens maxPromptTokens } } } }`;
    const view = (await ok(PROJ, { input: { query: 'rains', maxNodes: 10 } })).thread.projection;
    expect(view.__typename).toBe('Projection');
    expect(view.prompt).toContain(`<FOCUS>\n${view.layers.focus}\n</FOCUS>`);
    expect(view.prompt).toContain(view.digest);
    expect(view.nodes.map((n: { id: string }) => n.id)).toEqual(view.nodeIds);
    expect(view.nodeIds).toContain(answer);
    expect(view.tokenEstimate).toBe(Math.ceil(view.prompt.length / 4));
    const overflow = (await ok(PROJ, { input: { maxPromptTokens: 5 } })).thread.projection;
    expect(overflow).toMatchObject({
      __typename: 'ProjectionOverflowError',
      code: 'PROJECTION_OVERFLOW',
      maxPromptTokens: 5,
    });
    expect(overflow.requiredTokens).toBeGreaterThan(5);
  });

  it('runs: start, dispatch, approval, usage, cancel, import; each typed error', async () => {
    const RUN = `id goal constraints status currentNode visitedNodes iterationCount maxIterations retryCount
      maxRetries lastError waitingFor waitingSince waitingTimeoutAt pendingApproval memory taint lessonProvenance
      injectedFactIds compensationStack supervisorHistory createdAt updatedAt startedAt workflowState
      thread { id } spend { inputTokens outputTokens totalTokens costUsd calls }
      budget { maxTokenBudget budgetUsd thresholdsFired }
      modelBreakdown { key spend { costUsd } } nodeBreakdown { key spend { inputTokens } }`;
    const started = await ok(`mutation { startRun(input: { threadId: "t1", goal: "plan a trip",
      constraints: ["cheap"], maxTokenBudget: 10000, budgetUsd: 5, maxIterations: 20, maxRetries: 2,
      maxExecutionTimeMs: 60000, memory: { city: "Oslo" }, idempotencyKey: "start-1" }) {
      ${ERR} ... on StartRunSuccess { logIndex run { ${RUN} } } } }`);
    const run = started.startRun.run;
    runId = run.id;
    expect(run).toMatchObject({
      goal: 'plan a trip',
      constraints: ['cheap'],
      memory: { city: 'Oslo' },
      maxIterations: 20,
      budget: { maxTokenBudget: 10000, budgetUsd: 5, thresholdsFired: [] },
      thread: { id: 't1' },
    });
    expect(run.workflowState.run_id).toBe(runId);

    const dispatched = await ok(
      `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: UPDATE_MEMORY,
        payload: { updates: { booked: true } }, compensation: { type: "unbook", payload: {} },
        metadata: { agent_id: "planner" } } }) { ${ERR} ... on DispatchSuccess { logIndex run { status memory compensationStack } } } }`,
      { r: runId },
    );
    expect(dispatched.dispatch.__typename, JSON.stringify(dispatched)).toBe('DispatchSuccess');
    expect(dispatched.dispatch.run.memory).toMatchObject({ booked: true });
    expect(dispatched.dispatch.run.compensationStack).toHaveLength(1);

    const waiting = await ok(
      `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: REQUEST_HUMAN_INPUT,
        payload: { pending_approval: { question: "book it?" } } } }) { ${ERR} ... on DispatchSuccess { run { status waitingFor pendingApproval waitingTimeoutAt } } } }`,
      { r: runId },
    );
    expect(waiting.dispatch.run).toMatchObject({
      status: 'WAITING',
      waitingFor: 'human_approval',
      pendingApproval: { question: 'book it?' },
    });
    const resumed = await ok(
      `mutation($r: ID!) { resolveApproval(input: { runId: $r, decision: "approved", response: { note: "ok" },
        memoryUpdates: { approved: true } }) { ${ERR} ... on ResolveApprovalSuccess { run { status memory } } } }`,
      { r: runId },
    );
    expect(resumed.resolveApproval.run.status).toBe('RUNNING');
    const notWaiting = await typed(
      `mutation($r: ID!) { resolveApproval(input: { runId: $r, decision: "approved" }) { ${ERR} } }`,
      'InvalidTransitionError',
      { r: runId },
    );
    expect(notWaiting.code).toBe('INVALID_TRANSITION');

    const usage = await ok(
      `mutation($r: ID!, $n: String) { recordUsage(input: { runId: $r, nodeId: $n, model: "gpt-4o",
        inputTokens: 100, outputTokens: 20, costUsd: 0.5 }) { ${ERR} ... on RecordUsageSuccess { run { ${RUN} } } } }`,
      { r: runId, n: answer },
    );
    const charged = usage.recordUsage.run;
    expect(charged.spend).toMatchObject({
      inputTokens: 100,
      outputTokens: 20,
      totalTokens: 120,
      calls: 1,
    });
    expect(charged.modelBreakdown).toEqual([{ key: 'gpt-4o', spend: { costUsd: 0.5 } }]);
    expect(charged.nodeBreakdown).toEqual([{ key: answer, spend: { inputTokens: 100 } }]);

    const cancelled = await ok(
      `mutation($r: ID!) { cancelRun(input: { runId: $r, reason: "user", rollback: true }) { ${ERR} ... on CancelRunSuccess { run { status } } } }`,
      { r: runId },
    );
    expect(cancelled.cancelRun.run.status).toBe('CANCELLED');
    const transition = await typed(
      `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: SET_STATUS, payload: { status: "running" } } }) { ${ERR} } }`,
      'InvalidTransitionError',
      { r: runId },
    );
    expect(transition).toMatchObject({ from: 'CANCELLED', to: 'RUNNING' });
    const terminal = await typed(
      `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: UPDATE_MEMORY, payload: { updates: { a: 1 } } } }) { ${ERR} } }`,
      'InvalidStateError',
      { r: runId },
    );
    expect(terminal.code).toBe('INVALID_ACTION');
    const stale = await typed(
      `mutation($r: ID!) { dispatch(input: { runId: $r, expectedIndex: 1, action: { type: GOTO_NODE, payload: { node_id: "x" } } }) { ${ERR} } }`,
      'ConflictError',
      { r: runId },
    );
    expect(stale.expectedIndex).toBe(1);
    await typed(`mutation { cancelRun(input: { runId: "nope" }) { ${ERR} } }`, 'NotFoundError');

    const state = run.workflowState;
    const imported = await ok(
      `mutation($s: JSON!) { importWorkflowState(input: { threadId: "t1", state: $s }) { ${ERR} ... on ImportWorkflowStateSuccess { run { id status } } } }`,
      { s: { ...state, run_id: 'imported-1' } },
    );
    expect(imported.importWorkflowState.run.id).toBe('imported-1');
    const newer = await typed(
      `mutation($s: JSON!) { importWorkflowState(input: { threadId: "t1", state: $s }) { ${ERR} } }`,
      'InvalidStateError',
      { s: { ...state, run_id: 'imported-2', state_schema_version: 99 } },
    );
    expect(newer.code).toBe('SCHEMA_VERSION_UNSUPPORTED');

    const runs = await ok(
      `query($r: ID!) {
        run(id: $r) { id status }
        all: runs(first: 1) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
        cancelled: runs(filter: { threadId: "t1", status: [CANCELLED] }) { edges { node { id } } }
        thread(id: "t1") { runs(status: [RUNNING]) { edges { node { id } } } }
      }`,
      { r: runId },
    );
    expect(runs.run).toEqual({ id: runId, status: 'CANCELLED' });
    expect(runs.all.pageInfo.hasNextPage).toBe(true);
    const next = await ok(
      `query($a: String) { runs(first: 5, after: $a) { edges { node { id } } } }`,
      {
        a: runs.all.pageInfo.endCursor,
      },
    );
    expect(next.runs.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['imported-1']);
    expect(runs.cancelled.edges).toEqual([{ node: { id: runId } }]);
    expect(runs.thread.runs.edges).toEqual([{ node: { id: 'imported-1' } }]);

    const written = await ok(
      `mutation($r: ID!) { appendNodes(input: { threadId: "t1", nodes: [{ kind: INFERENCE, payload: "by run", runId: $r }] }) {
        ${ERR} ... on AppendNodesSuccess { nodes { run { id } } } } }`,
      { r: 'imported-1' },
    );
    expect(written.appendNodes.nodes[0].run).toEqual({ id: 'imported-1' });
  });

  it('importState, forkThread, diffThreads and threads()', async () => {
    const exported = (await ok('{ thread(id: "t1") { state } }')).thread.state;
    const imported = await ok(
      `mutation($s: JSON!) { importState(input: { threadId: "copy", state: $s, metadata: { from: "t1" },
        nodeTypes: [{ name: "preference", description: "likes" }], allowDynamicNodeTypes: true, idempotencyKey: "imp" }) {
        ${ERR_T} ... on ImportStateSuccess { thread { id nodeCount allowDynamicNodeTypes } } } }`,
      { s: exported },
    );
    expect(imported.importState.__typename, JSON.stringify(imported)).toBe('ImportStateSuccess');
    expect(imported.importState.thread).toMatchObject({ id: 'copy', allowDynamicNodeTypes: true });
    const broken = structuredClone(exported);
    broken.nodes[1].payload = { tampered: true };
    const refused = await typed(
      `mutation($s: JSON!) { importState(input: { state: $s }) { ${ERR_T} } }`,
      'InvalidStateError',
      { s: broken },
    );
    expect(refused).toMatchObject({ code: 'NODE_ID_MISMATCH', nodeId: exported.nodes[1].id });

    const forked =
      await ok(`mutation { forkThread(input: { threadId: "t1", upToIndex: 3, newThreadId: "fork" }) {
      ${ERR_T} ... on ForkThreadSuccess { thread { id logLength forkedFrom { thread { id } upToIndex } } } } }`);
    expect(forked.forkThread.thread).toEqual({
      id: 'fork',
      logLength: 4,
      forkedFrom: { thread: { id: 't1' }, upToIndex: 3 },
    });
    await typed(
      `mutation { forkThread(input: { threadId: "t1", upToIndex: 0 }) { ${ERR_T} } }`,
      'ValidationError',
    );
    const diff = await ok(
      `{ diffThreads(a: "t1", b: "fork") { commonPrefix onlyA { index type } onlyB { index type } } }`,
    );
    expect(diff.diffThreads.commonPrefix).toBe(3);
    expect(diff.diffThreads.onlyB).toEqual([{ index: 3, type: 'thread_forked' }]);
    const missing = await t.gql('{ diffThreads(a: "t1", b: "nope") { commonPrefix } }');
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const threads =
      await ok(`{ first: threads(first: 2) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
      forks: threads(filter: { forkedFrom: "t1" }) { edges { node { id } } } }`);
    // Oldest first; a fork keeps its source's creation time (it copies thread_created), ids break ties.
    expect(threads.first.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
      'fork',
      't1',
    ]);
    expect(threads.forks.edges).toEqual([{ node: { id: 'fork' } }]);
    const rest = await ok(
      `query($a: String) { threads(after: $a, filter: { createdAfter: "2000-01-01T00:00:00Z" }) { edges { node { id } } } }`,
      {
        a: threads.first.pageInfo.endCursor,
      },
    );
    expect(rest.threads.edges).toEqual([{ node: { id: 'copy' } }]);

    const deleted = await ok(
      `mutation { deleteThread(input: { threadId: "copy", idempotencyKey: "del" }) {
        ${ERR_T} ... on DeleteThreadSuccess { threadId logLength stateHash } } }`,
    );
    expect(deleted.deleteThread).toMatchObject({ threadId: 'copy', logLength: 1 });
    expect(deleted.deleteThread.stateHash).toMatch(/^[0-9a-f]{64}$/);
    expect(
      await typed(
        `mutation { deleteThread(input: { threadId: "copy" }) { ${ERR_T} } }`,
        'NotFoundError',
      ),
    ).toMatchObject({
      code: 'NOT_FOUND',
    });
    const audit = await ok(
      '{ auditEntries(first: 5) { totalCount edges { node { id recordedAt actor action threadId logLength stateHash } } } }',
    );
    expect(audit.auditEntries.totalCount).toBe(1);
    expect(audit.auditEntries.edges.map((e: { node: unknown }) => e.node)).toEqual([
      expect.objectContaining({
        action: 'thread_deleted',
        actor: 'open',
        threadId: 'copy',
        logLength: 1,
        stateHash: deleted.deleteThread.stateHash,
      }),
    ]);
    const gone = await t.gql('{ thread(id: "copy") { id } }');
    expect(gone.data?.thread ?? null).toBeNull();
  });

  it('queries say NOT_FOUND and BAD_USER_INPUT in extensions.code', async () => {
    for (const q of [
      '{ thread(id: "nope") { id } }',
      '{ run(id: "nope") { id } }',
      '{ causalNode(threadId: "t1", id: "cw_nope") { id } }',
      '{ thread(id: "t1") { causalNode(id: "cw_nope") { id } } }',
    ]) {
      const r = await t.gql(q);
      expect(r.errors?.[0]?.extensions?.code, q).toBe('NOT_FOUND');
    }
    for (const q of [
      '{ threads(first: -1) { edges { cursor } } }',
      '{ threads(after: "not-a-cursor") { edges { cursor } } }',
      '{ thread(id: "t1") { nodes(first: 5000) { edges { cursor } } } }',
      '{ thread(id: "t1") { frontier { ancestors(depth: 999) { id } } } }',
    ]) {
      const r = await t.gql(q);
      expect(r.errors?.[0]?.extensions?.code, q).toBe('BAD_USER_INPUT');
    }
  });

  it('exercised every name of the public contract (subscriptions excepted)', () => {
    expect(coverage.missing(CONTRACT_NAMES)).toEqual([]);
  });
});
